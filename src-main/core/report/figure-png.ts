import { Resvg } from '@resvg/resvg-js';

/**
 * A figure's SVG rendered to PNG (resvg, a native SVG renderer), at twice its size for print and
 * slides; text uses the system's sans-serif font.
 */
export function figurePng(svg: string): Uint8Array {
  const rendered = new Resvg(svg, {
    fitTo: { mode: 'zoom', value: 2 },
    background: 'white',
    font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans', sansSerifFamily: 'DejaVu Sans' },
  }).render();
  return rendered.asPng();
}
