import type { GlossaryId } from './glossary';

/** Whether the glossary is open, and at which entry (null: from the top). One glossary for the whole desk. */
export const glossaryView = $state<{ open: boolean; entry: GlossaryId | null }>({ open: false, entry: null });

export function showGlossary(entry: GlossaryId | null): void {
  glossaryView.entry = entry;
  glossaryView.open = true;
}
