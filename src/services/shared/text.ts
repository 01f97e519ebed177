/** Checks of text that users write (messages), shared by every service that stores it. */
import { badInput } from '../../errors.js';

/** Characters (Unicode code points, not UTF-16 units) in `text`. */
export function codePoints(text: string): number {
  let n = text.length;
  for (let i = 0; i < text.length - 1; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

/**
 * The text as it will be stored: lone surrogates (which UTF-8 cannot carry) become U+FFFD, so what a caller gets
 * back is what every reader will see. Empty or longer than `maxChars` characters: BAD_USER_INPUT naming `argument`.
 */
export function userText(raw: string, argument: string, maxChars: number): string {
  const text = raw.toWellFormed();
  if (text.trim().length === 0) throw badInput(argument, 'must not be empty');
  if (text.length > maxChars && codePoints(text) > maxChars)
    throw badInput(argument, `must be at most ${maxChars} characters`);
  return text;
}
