import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FIGURE_PALETTE } from '../../src-shared/plots/svg-style';

describe('one palette for the desk and the reports', () => {
  it("the desk's light theme carries the report figures' colours", () => {
    const css = readFileSync(new URL('../../src-renderer/styles/theme.css', import.meta.url), 'utf8');
    const light = css.slice(css.indexOf('@media (prefers-color-scheme: light)'));
    const value = (name: string): string => new RegExp(`--${name}:\\s*(#[0-9a-f]{6})`, 'i').exec(light)![1];
    for (const name of ['text', 'muted', 'grid', 'static', 'dynamic', 'fused', 'severity'] as const)
      expect(value(name), name).toBe(FIGURE_PALETTE[name]);
  });
});
