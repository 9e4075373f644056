/*
 * utf8.h - text for the YAML and XML writers and for error messages. File
 * names, and error messages that quote input, may hold any bytes; YAML
 * and XML take only UTF-8, libyaml refuses to emit anything else (its
 * event set-up fails and leaves the event unset), and control characters
 * would act on a terminal. These make any string safe to write: each byte
 * that does not start a valid UTF-8 character, and each control character
 * but tab and line feed, becomes the four characters \xNN. No state; used
 * by checker/ and cmd/.
 */
#ifndef MSR_UTF8_H
#define MSR_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <yaml.h>

/* Length of the valid character encoded in UTF-8 at `s` (1 for ASCII, NUL
 * included), 0 when the bytes there are not one (bad UTF-8, overlong,
 * surrogate, U+FFFE/U+FFFF). */
size_t msr_utf8_char(const unsigned char *s);

/* `s` itself when it is valid UTF-8 throughout and holds no control
 * character but tab and line feed; else a copy with those bytes escaped
 * (\xNN), which the caller frees through *copy (NULL when `s` is
 * returned). NULL when out of memory. Also for text on a terminal. */
const char *msr_utf8_clean(const char *s, char **copy);

/* yaml_scalar_event_initialize for any string `s` (cleaned as above, tag
 * and anchor none); false only when out of memory, `ev` then unset. */
bool msr_utf8_yaml_scalar(yaml_event_t *ev, const char *s, bool plain_implicit,
			  bool quoted_implicit, yaml_scalar_style_t style);

/* Emit `s` as a plain (quoted false) or double-quoted scalar through `em`,
 * unless *failed; sets *failed when libyaml fails or memory runs out. */
void msr_utf8_yaml_emit(yaml_emitter_t *em, bool *failed, const char *s,
			bool quoted);

#endif /* MSR_UTF8_H */
