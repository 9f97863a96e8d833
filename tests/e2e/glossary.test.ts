/**
 * Issue 32, deliverable 4: a glossary reached from every term that has one. On a desk with a
 * recording (its calibration figures shown), in reset mode and with the hardware knobs unfolded, every glossary entry
 * is linked from at least one place, and each link opens the glossary at its own entry.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GLOSSARY, GLOSSARY_IDS } from '../../src-renderer/lib/glossary';
import type { BrowserMode } from '../support/browser-mode';
import { startDesk, testIdText, waitUntil } from '../support/desk-page';

let app: BrowserMode;

beforeAll(async () => {
  app = await startDesk([], undefined, { settle: false });
  await waitUntil('a hundred frames', async () => Number(await testIdText(app, 'frames-processed')) >= 100);
  await app.page.getByTestId('pause').click();
  // paused, the calibration computes in full by itself (TCE comes with the full computation)
  await app.page.locator('[data-glossary="TCE"]').first().waitFor({ timeout: 60_000 });
  await app.page.getByTestId('hardware').locator('summary').click();
  // reset mode shows tau and g0
  await app.page.getByTestId('mode').selectOption('reset');
  await app.page.getByTestId('tau').waitFor();
}, 180_000);

afterAll(async () => {
  await app?.close();
});

describe('the glossary', () => {
  it('links every entry from the desk, and each link opens the glossary at its entry', async () => {
    const page = app.page;
    const linked = await page
      .locator('[data-glossary]')
      .evaluateAll((buttons) => [...new Set(buttons.map((b) => b.getAttribute('data-glossary')))]);
    expect([...linked].sort()).toEqual([...GLOSSARY_IDS].sort());

    const dialog = page.getByTestId('glossary');
    for (const id of GLOSSARY_IDS) {
      await page.locator(`[data-glossary="${id}"]`).first().click();
      await waitUntil(`the glossary at ${id}`, () => dialog.isVisible());
      const entry = page.getByTestId(`glossary-${id}`);
      expect(await entry.getAttribute('aria-current'), id).toBe('true');
      expect(await entry.innerText()).toContain(GLOSSARY[id].term);
      // in view inside the dialog, and focused (a screen reader reads it first)
      const [inner, outer] = [await entry.boundingBox(), await dialog.boundingBox()];
      expect(inner!.y, id).toBeGreaterThanOrEqual(outer!.y);
      expect(inner!.y + inner!.height, id).toBeLessThanOrEqual(outer!.y + outer!.height + 1);
      expect(await page.evaluate(() => document.activeElement?.getAttribute('data-entry'))).toBe(id);
      expect(await page.locator('[data-entry][aria-current="true"]').count()).toBe(1);
      await page.getByTestId('glossary-close').click();
      await waitUntil('the glossary to close', async () => !(await dialog.isVisible()));
    }
  });

  it('opens from the top bar, and the "?" beside a field leaves the field its label', async () => {
    const page = app.page;
    await page.getByTestId('open-glossary').click();
    await waitUntil('the glossary', () => page.getByTestId('glossary').isVisible());
    expect(await page.locator('[data-entry][aria-current="true"]').count()).toBe(0);
    await page.keyboard.press('Escape');
    await waitUntil('the glossary to close', async () => !(await page.getByTestId('glossary').isVisible()));
    // the selects keep their labels: the "?" sits beside each label, not inside it
    for (const name of ['variant', 'mode', 'discretisation'])
      expect(await page.getByRole('combobox', { name, exact: true }).count(), name).toBe(1);
    expect(app.pageErrors).toEqual([]);
  });
});
