/**
 * The Content-Security-Policy of the app's page, one policy for both ways it is served: the
 * browser-mode host (HTTP on 127.0.0.1, whose page talks to its WebSocket) and the Electron shell
 * (the knob:// app protocol, whose page talks over IPC only and may connect nowhere). The policy
 * goes out as a header and is also written into the page's own meta tag, so a copy of the page
 * opened any other way keeps the strict default and never a looser one (both policies apply when
 * both are present, so the meta must allow what the header allows).
 */
export interface PolicyOptions {
  /** Where the page may connect besides its own origin (browser mode: its WebSocket, by exact port). */
  connectSources: string[];
}

export function contentSecurityPolicy(options: PolicyOptions): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    ["connect-src 'self'", ...options.connectSources].join(' '),
    "worker-src 'self' blob:",
    "media-src 'self' blob: mediastream:",
    "object-src 'none'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
    "form-action 'none'",
  ].join('; ');
}

const META_POLICY = /(<meta\s+http-equiv="Content-Security-Policy"\s+content=")[^"]*(")/i;

/**
 * The page with its meta policy replaced by `policy` (less frame-ancestors, which browsers ignore,
 * with a console warning, in a meta tag). A page without that meta tag is left as it is: the
 * header carries the policy.
 */
export function withMetaPolicy(html: string, policy: string): string {
  const meta = policy
    .split('; ')
    .filter((directive) => !directive.startsWith('frame-ancestors'))
    .join('; ');
  return html.replace(META_POLICY, `$1${meta}$2`);
}
