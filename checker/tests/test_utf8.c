/*
 * test_utf8.c - which bytes the report writers keep and which they escape
 * (checker/utf8.h).
 */
#include "utf8.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

static void expect_clean(const char *in, const char *want)
{
	char *copy;
	const char *out = msr_utf8_clean(in, &copy);

	cr_assert_not_null(out);
	cr_expect_str_eq(out, want, "input %s", in);
	if (!strcmp(in, want))
		cr_expect(out == in && !copy, "a valid string is returned as is");
	else
		cr_expect(out == copy, "an escaped string is the copy to free");
	free(copy);
}

Test(utf8, valid_text_is_kept)
{
	expect_clean("", "");
	expect_clean("plain ascii, tabs\tand\nbreaks", "plain ascii, tabs\tand\nbreaks");
	expect_clean("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
}

Test(utf8, invalid_bytes_become_hex_escapes)
{
	expect_clean("caf\xe9.trace", "caf\\xe9.trace");     /* Latin-1 */
	expect_clean("\xff\xfe", "\\xff\\xfe");
	expect_clean("a\x80z", "a\\x80z");                  /* lone continuation */
	expect_clean("\xc0\xaf", "\\xc0\\xaf");             /* overlong '/' */
	expect_clean("\xe0\x80\xaf", "\\xe0\\x80\\xaf");    /* overlong, 3 bytes */
	expect_clean("\xed\xa0\x80", "\\xed\\xa0\\x80");    /* surrogate */
	expect_clean("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"); /* > U+10FFFF */
	expect_clean("\xef\xbf\xbe", "\\xef\\xbf\\xbe");    /* U+FFFE */
	/* a sequence cut by the end of the string, then by another byte */
	expect_clean("ok\xe2\x82", "ok\\xe2\\x82");
	expect_clean("\xe2\x82z\xc3\xa9", "\\xe2\\x82z\xc3\xa9");
}

Test(utf8, control_characters_but_tab_and_line_feed_are_escaped)
{
	expect_clean("a\tb\nc", "a\tb\nc");
	expect_clean("\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m");
	expect_clean("bell\a del\x7f cr\r", "bell\\x07 del\\x7f cr\\x0d");
}

Test(utf8, character_lengths)
{
	cr_expect_eq(msr_utf8_char((const unsigned char *)"a"), 1);
	cr_expect_eq(msr_utf8_char((const unsigned char *)""), 1);
	cr_expect_eq(msr_utf8_char((const unsigned char *)"\xc3\xa9"), 2);
	cr_expect_eq(msr_utf8_char((const unsigned char *)"\xe2\x82\xac"), 3);
	cr_expect_eq(msr_utf8_char((const unsigned char *)"\xf0\x9f\x98\x80"), 4);
	cr_expect_eq(msr_utf8_char((const unsigned char *)"\xc3"), 0);
	cr_expect_eq(msr_utf8_char((const unsigned char *)"\xf8\x88\x80\x80\x80"), 0);
}

/* Every string becomes a scalar event libyaml accepts. */
Test(utf8, any_string_makes_a_scalar_event)
{
	const char *in[] = {"plain", "caf\xe9", "\xff", "\xc0\xaf ok \xed\xa0\x80"};

	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		yaml_event_t ev;

		cr_assert(msr_utf8_yaml_scalar(&ev, in[i], true, true,
					       YAML_DOUBLE_QUOTED_SCALAR_STYLE));
		cr_expect_eq(ev.type, YAML_SCALAR_EVENT);
		yaml_event_delete(&ev);
	}
}
