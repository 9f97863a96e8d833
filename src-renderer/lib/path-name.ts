/** A path's last part, split on either separator (the desk may show paths of a Windows machine). */
export function pathName(path: string): string {
  return path.split(/[\\/]/).pop() ?? path;
}
