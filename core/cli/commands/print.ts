/** `version` and `print token`: what the CLI knows without asking a server, as vault prints them. */
import type { Command } from 'commander';
import { VERSION } from '../../version.js';
import { storedToken } from '../token-file.js';
import { commandGroup, type CliContext } from '../context.js';

/** What `keywarden version` and `keywarden -version` print, as `vault version` names its build. */
export const VERSION_LINE = `Keywarden v${VERSION}`;

export function registerPrint(program: Command, ctx: CliContext): void {
  program
    .command('version')
    .description('Print the version of this command line')
    .action(() => ctx.io.out(`${VERSION_LINE}\n`));

  commandGroup(program, 'print', 'Print what the CLI would use (print token)')
    .command('token')
    .description('Print the token the other commands send: KEYWARDEN_TOKEN, VAULT_TOKEN, or the one login kept in the token file')
    .action(async () => {
      // As vault: an empty line when there is none, so `$(keywarden print token)` is simply empty.
      ctx.io.out(`${(await storedToken(ctx.env)).token ?? ''}\n`);
    });
}
