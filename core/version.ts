/** The Keywarden version, reported by sys/seal-status, sys/health and `keywarden --version`. */
export const VERSION = '0.1.0';
