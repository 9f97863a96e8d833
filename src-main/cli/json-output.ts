/**
 * A command's --json document on stdout: typed arrays as JSON arrays (JSON.stringify would write
 * them as objects keyed by index); NaN and infinities become null, as JSON has no other spelling.
 */
export function jsonText(value: unknown): string {
  return `${JSON.stringify(value, (_, v: unknown) => (ArrayBuffer.isView(v) && !(v instanceof DataView) ? Array.from(v as Float64Array) : v), 1)}\n`;
}

export function printJson(value: unknown): void {
  process.stdout.write(jsonText(value));
}
