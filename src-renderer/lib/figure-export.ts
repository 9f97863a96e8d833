import type { FigurePalette } from '../../src-shared/plots/svg-style';
import { download } from './download';

/**
 * Figures in the desk are the same SVG the report draws (src-shared/plots), coloured by the
 * theme's CSS variables; exported, they use the report's palette, so a PNG or SVG saved from the
 * desk matches the report. Saving goes through a download (Electron asks where to save it).
 */
export const DESK_PALETTE: FigurePalette = {
  text: 'var(--text)',
  muted: 'var(--muted)',
  grid: 'var(--grid)',
  static: 'var(--static)',
  dynamic: 'var(--dynamic)',
  fused: 'var(--fused)',
  severity: 'var(--severity)',
  band: 'var(--dynamic)',
};

export function saveSvg(fileStem: string, svg: string): void {
  download(`${fileStem}.svg`, new Blob([svg], { type: 'image/svg+xml' }));
}

/** The SVG drawn at `scale` times its size onto a white canvas, saved as PNG. */
export async function svgToPng(svg: string, scale = 2): Promise<Blob> {
  const url = URL.createObjectURL(new Blob([svg], { type: 'image/svg+xml' }));
  try {
    const image = new Image();
    image.src = url;
    await image.decode();
    const canvas = document.createElement('canvas');
    canvas.width = Math.round(image.naturalWidth * scale);
    canvas.height = Math.round(image.naturalHeight * scale);
    const context = canvas.getContext('2d')!;
    context.fillStyle = '#ffffff';
    context.fillRect(0, 0, canvas.width, canvas.height);
    context.drawImage(image, 0, 0, canvas.width, canvas.height);
    return await new Promise<Blob>((resolve, reject) =>
      canvas.toBlob((blob) => (blob ? resolve(blob) : reject(new Error('the figure could not be drawn'))), 'image/png'),
    );
  } finally {
    URL.revokeObjectURL(url);
  }
}

export async function savePng(fileStem: string, svg: string): Promise<void> {
  download(`${fileStem}.png`, await svgToPng(svg));
}
