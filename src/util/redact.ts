/**
 * Cuts a secret (an API key, a control token) out of text a server sent back, before it reaches a
 * message, a log or a stored node. Servers echo what they were sent in transformed forms too: the key
 * URL-encoded (a query string), JSON-escaped, in hex, or inside base64 (an `Authorization: Basic`
 * header, a dumped request), where it starts at any of three offsets of a 3-byte group.
 */
export function redactSecret(text: string, secret: string | undefined, label = '[redacted]'): string {
  if (!secret || secret.length < 4) return text;
  let out = text;
  for (const form of secretForms(secret)) out = out.replace(new RegExp(escapeRegExp(form), 'gi'), label);
  return out;
}

/** Every form of `secret` looked for (longest first, so a longer form is not cut by a shorter one). */
function secretForms(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  const forms = new Set<string>([secret, encodeURIComponent(secret), encodeURI(secret), JSON.stringify(secret).slice(1, -1), bytes.toString('hex')]);
  forms.add(encodeURIComponent(secret).replace(/%20/g, '+'));
  for (let shift = 0; shift < 3; shift++) {
    // Inside a longer base64 text the secret's bytes start at offset `shift` of a group: the characters
    // wholly determined by its own bytes are the same whatever surrounds it.
    const padded = Buffer.concat([Buffer.alloc(shift), bytes]);
    const b64 = padded.toString('base64');
    const start = Math.ceil((shift * 4) / 3);
    const end = Math.floor(((shift + bytes.length) * 4) / 3);
    const core = b64.slice(start, end);
    if (core.length >= 8) {
      forms.add(core);
      forms.add(core.replace(/\+/g, '-').replace(/\//g, '_'));
    }
  }
  return [...forms].filter((f) => f.length >= 4).sort((a, b) => b.length - a.length);
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
