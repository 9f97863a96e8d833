/** Splits a footnote (an identity, say) into lines that fit a figure `width` pixels wide at 9 px text. */
export function wrapFootnote(note: string, width: number): string[] {
  const chars = Math.max(20, Math.floor(width / 5.6));
  const out: string[] = [];
  let current = '';
  for (const word of note.split(' ')) {
    if (current.length + word.length + 1 > chars && current !== '') {
      out.push(current);
      current = word;
    } else current = current === '' ? word : `${current} ${word}`;
  }
  if (current !== '') out.push(current);
  return out;
}
