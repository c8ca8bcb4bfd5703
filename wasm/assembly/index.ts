// Entry of the WASM crypto core; kernels are added module by module (see wasm/README.md).
export function version(): i32 {
  return 1;
}
