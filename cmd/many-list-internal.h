/*
 * many-list-internal.h - the fields of one line of a `check --list` file.
 *
 * Fields are separated by blanks (space, tab; a CR or LF ends the line). A
 * field written in double quotes may hold blanks and '#': inside the quotes
 * a backslash takes the next character as it is (\" and \\). A '#' at the
 * start of a field begins a comment that runs to the end of the line; a '#'
 * inside a field is part of it (run#3/nas.trace.zst). The summary table of
 * `check` on several traces writes its paths the same way. Pure string
 * code: nothing here opens a file or prints. Private to cmd/.
 */
#ifndef MSR_MANY_LIST_INTERNAL_H
#define MSR_MANY_LIST_INTERNAL_H

/*
 * Split `line` in place into at most `max` fields (pointers into `line`,
 * quotes and escapes removed) and set *nf. Returns NULL, or a sentence
 * saying what is wrong (an unterminated quote, text right after a closing
 * quote, more than `max` fields), with *col the 1-based column where it is.
 */
const char *mlist_fields(char *line, char **f, unsigned max, unsigned *nf,
			 unsigned *col);

/*
 * `field` as a list line writes it: as it is, or in double quotes (with
 * '"' and '\\' escaped) when it is empty, holds a blank, a CR or a quote,
 * or starts with '#'. mlist_fields gives it back (a field holding a LF
 * cannot be written on one line: it is quoted, not escaped). Malloc'd,
 * NULL when out of memory.
 */
char *mlist_quote(const char *field);

#endif /* MSR_MANY_LIST_INTERNAL_H */
