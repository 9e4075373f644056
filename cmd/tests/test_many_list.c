/*
 * test_many_list.c - the fields of a `check --list` line: blanks, quotes,
 * escapes, comments and the errors with their columns; and fields written
 * back quoted.
 */
#include "many-list-internal.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#define LINE_MAX_TEST 256

/* Split `text` (copied) into at most 3 fields and expect `want` (n of
 * them, NULL-terminated list unused past n). */
static void expect_fields(const char *text, unsigned n, const char *want0,
			  const char *want1, const char *want2)
{
	char line[LINE_MAX_TEST];
	char *f[3] = {0};
	const char *want[3] = {want0, want1, want2};
	unsigned nf = 99, col = 99;
	const char *why;

	cr_assert_lt(strlen(text), sizeof(line));
	strcpy(line, text);
	why = mlist_fields(line, f, 3, &nf, &col);
	cr_assert_null(why, "%s: unexpected error: %s", text, why);
	cr_assert_eq(nf, n, "%s: %u fields, want %u", text, nf, n);
	for (unsigned i = 0; i < n; i++)
		cr_expect_str_eq(f[i], want[i], "%s: field %u", text, i + 1);
}

static void expect_error(const char *text, unsigned want_col,
			 const char *want_why)
{
	char line[LINE_MAX_TEST];
	char *f[3];
	unsigned nf, col;
	const char *why;

	strcpy(line, text);
	why = mlist_fields(line, f, 3, &nf, &col);
	cr_assert_not_null(why, "%s: no error", text);
	cr_expect(strstr(why, want_why) != NULL, "%s: got '%s'", text, why);
	cr_expect_eq(col, want_col, "%s: column %u, want %u", text, col,
		     want_col);
}

Test(many_list, blank_separated_fields)
{
	expect_fields("a.zst\n", 1, "a.zst", NULL, NULL);
	expect_fields("  a.zst\tb.log  c.yaml \n", 3, "a.zst", "b.log", "c.yaml");
	expect_fields("a.zst - r.yaml\r\n", 3, "a.zst", "-", "r.yaml");
	expect_fields("a.zst", 1, "a.zst", NULL, NULL);
	expect_fields("a.zst\r", 1, "a.zst", NULL, NULL);
}

Test(many_list, empty_and_comment_lines)
{
	expect_fields("\n", 0, NULL, NULL, NULL);
	expect_fields("", 0, NULL, NULL, NULL);
	expect_fields("   \t\r\n", 0, NULL, NULL, NULL);
	expect_fields("# trace steps report\n", 0, NULL, NULL, NULL);
	expect_fields("   # indented\n", 0, NULL, NULL, NULL);
}

Test(many_list, hash_starts_a_comment_only_at_a_field_start)
{
	expect_fields("run#3/nas.trace.zst #3 is flaky\n", 1,
		      "run#3/nas.trace.zst", NULL, NULL);
	expect_fields("a.zst s.log#x #r.yaml\n", 2, "a.zst", "s.log#x", NULL);
	expect_fields("a.zst\t# steps come later\n", 1, "a.zst", NULL, NULL);
}

Test(many_list, quoted_fields_hold_blanks_and_hashes)
{
	expect_fields("\"seed 7/nas.trace.zst\" \"seed 7/nas.steps.zst\"\n", 2,
		      "seed 7/nas.trace.zst", "seed 7/nas.steps.zst", NULL);
	expect_fields("\"#1.zst\" - \"out dir/#1.yaml\"\n", 3, "#1.zst", "-",
		      "out dir/#1.yaml");
	expect_fields("\"\" x\n", 2, "", "x", NULL);
	expect_fields("\"a b\"", 1, "a b", NULL, NULL);
	expect_fields("\"a b\"\r\n", 1, "a b", NULL, NULL);
	/* a quote inside an unquoted field is an ordinary character */
	expect_fields("it\"s.zst\n", 1, "it\"s.zst", NULL, NULL);
}

Test(many_list, backslash_escapes_inside_quotes_only)
{
	expect_fields("\"say \\\"hi\\\".zst\"\n", 1, "say \"hi\".zst", NULL,
		      NULL);
	expect_fields("\"back\\\\slash\" c:\\x\n", 2, "back\\slash", "c:\\x",
		      NULL);
	expect_fields("\"\\q\"\n", 1, "q", NULL, NULL);
}

Test(many_list, errors_name_their_column)
{
	expect_error("a b c d\n", 7, "more fields");
	expect_error("a \"b c\n", 3, "no closing quote");
	expect_error("\"abc\\\"\n", 1, "no closing quote");
	expect_error("\"ab\"c d\n", 5, "after a closing quote");
	expect_error("x \"a\"\"b\"\n", 6, "after a closing quote");
}

Test(many_list, a_field_never_reads_past_the_line)
{
	/* the escape before the terminator must not skip it */
	char line[] = {'"', 'a', '\\', '\0', 'b', '"', '\0'};
	char *f[3];
	unsigned nf, col;

	cr_expect_not_null(mlist_fields(line, f, 3, &nf, &col));
	cr_expect_eq(col, 1);
}

static void expect_quote(const char *field, const char *want)
{
	char *q = mlist_quote(field);
	char line[LINE_MAX_TEST], *f[3];
	unsigned nf, col;

	cr_assert_not_null(q);
	cr_expect_str_eq(q, want, "quoting '%s'", field);
	/* and it splits back into the field */
	cr_assert_lt(strlen(q), sizeof(line));
	strcpy(line, q);
	cr_expect_null(mlist_fields(line, f, 3, &nf, &col), "%s", q);
	cr_expect_eq(nf, 1, "%s", q);
	if (nf == 1)
		cr_expect_str_eq(f[0], field);
	free(q);
}

Test(many_list, quote_only_what_needs_it)
{
	expect_quote("run7/nas.trace.zst", "run7/nas.trace.zst");
	expect_quote("run#3/a.zst", "run#3/a.zst");
	expect_quote("c:\\x", "c:\\x");
	expect_quote("it\"s", "\"it\\\"s\"");
	expect_quote("seed 7/nas.trace.zst", "\"seed 7/nas.trace.zst\"");
	expect_quote("a\tb\\c", "\"a\tb\\\\c\"");
	expect_quote("#1.zst", "\"#1.zst\"");
	expect_quote("", "\"\"");
	expect_quote("cr\r", "\"cr\r\"");
}
