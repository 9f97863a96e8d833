/**
 * The figures' colours, one palette for every place a figure is drawn: the desk (its theme's CSS
 * variables, light and dark, carry these same values for the light theme), the HTML report and the
 * PNG and SVG files. Static and dynamic branches differ in hue and in lightness, so they stay apart
 * in grayscale and for colour-blind readers (blue against orange).
 */
export const FIGURE_PALETTE = {
  text: '#16191d',
  muted: '#515b67',
  grid: '#d3d9e0',
  static: '#0a6fb5',
  dynamic: '#a35f00',
  fused: '#2e7d32',
  severity: '#9aa3ad',
  band: '#a35f00',
} as const;

export type FigurePalette = Record<keyof typeof FIGURE_PALETTE, string>;

/** Class rules of every figure, with the palette's values (the desk overrides them with its theme). */
export function figureStyle(palette: FigurePalette = FIGURE_PALETTE): string {
  return [
    `.knob-figure{font:11px system-ui,sans-serif;color:${palette.text}}`,
    `.knob-figure text{fill:${palette.muted}}`,
    `.knob-figure .axis{stroke:${palette.muted};stroke-width:1}`,
    `.knob-figure .grid{stroke:${palette.grid};stroke-width:1}`,
    `.knob-figure .diagonal{stroke:${palette.muted};stroke-dasharray:4 3}`,
    `.knob-figure .bar{fill:${palette.static};opacity:.85}`,
    `.knob-figure .whisker{stroke:${palette.text};stroke-width:1.5}`,
    `.knob-figure .smooth{fill:none;stroke:${palette.dynamic};stroke-width:2}`,
    `.knob-figure .band{fill:${palette.band};opacity:.18}`,
    `.knob-figure .histogram{fill:${palette.muted}}`,
    `.knob-figure .series-static{fill:none;stroke:${palette.static};stroke-width:1.5}`,
    `.knob-figure .series-dynamic{fill:none;stroke:${palette.dynamic};stroke-width:1.5}`,
    `.knob-figure .series-fused{fill:none;stroke:${palette.fused};stroke-width:1.5}`,
    `.knob-figure .series-text{fill:none;stroke:${palette.text};stroke-width:1.5}`,
    `.knob-figure .series-target{fill:none;stroke:${palette.static};stroke-width:1;opacity:.55}`,
    `.knob-figure .series-severity{fill:${palette.severity};opacity:.35;stroke:none}`,
    `.knob-figure .legend-static{fill:${palette.static}}`,
    `.knob-figure .legend-dynamic{fill:${palette.dynamic}}`,
    `.knob-figure .legend-fused{fill:${palette.fused}}`,
    `.knob-figure .legend-text{fill:${palette.text}}`,
    `.knob-figure .legend-target{fill:${palette.static}}`,
    `.knob-figure .legend-severity{fill:${palette.severity}}`,
    `.knob-figure .tce-box{fill:${palette.static};fill-opacity:.3;stroke:${palette.static};stroke-width:1}`,
    `.knob-figure .tce-rate{stroke:${palette.dynamic};stroke-width:2.5}`,
    `.knob-figure .tce-total{fill:${palette.muted};opacity:.35}`,
    `.knob-figure .tce-rejected{fill:${palette.dynamic}}`,
  ].join('');
}
