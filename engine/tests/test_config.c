/*
 * test_config.c - unit tests of the YAML configuration loader: defaults,
 * every section, and file:line:column errors for unknown keys, duplicate
 * keys, wrong types, out-of-range values and garbage YAML.
 */
#include "engine.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char tmpdir[64];
static int nfile;

static void setup(void)
{
	strcpy(tmpdir, "/tmp/msr-config-XXXXXX");
	cr_assert(mkdtemp(tmpdir));
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(config, .init = setup, .fini = teardown);

static int load_text(struct msr_config *cfg, const char *text,
		     struct msr_error *err, char *path)
{
	FILE *f;

	snprintf(path, 128, "%s/c%d.yaml", tmpdir, nfile++);
	f = fopen(path, "w");
	cr_assert(f);
	fputs(text, f);
	fclose(f);
	return msr_config_load(cfg, path, err);
}

/* Loading `text` must fail at `pos` ("line:col") with `part` in the text,
 * and leave the defaults untouched. */
static void expect_error(const char *text, const char *pos, const char *part)
{
	struct msr_config cfg;
	struct msr_error err = MSR_ERROR_INIT;
	char path[128], where[160];

	msr_config_default(&cfg);
	cr_assert_eq(load_text(&cfg, text, &err, path), MSR_E_CONFIG, "'%s' loaded", text);
	snprintf(where, sizeof(where), "%s:%s", path, pos);
	cr_assert_str_eq(err.cause[0].where, where, "'%s': %s", text, err.cause[0].text);
	cr_assert(strstr(err.cause[0].text, part), "text '%s' lacks '%s'",
		  err.cause[0].text, part);
	cr_assert_eq(cfg.cores, 8);
	cr_assert_eq(cfg.nimages, 0);
	msr_config_release(&cfg);
}

Test(config, defaults_match_t2)
{
	struct msr_config cfg;

	msr_config_default(&cfg);
	cr_assert_eq(cfg.cores, 8);
	cr_assert_eq(cfg.threads_per_core, 8);
	cr_assert_eq(cfg.l1_line, 16);
	cr_assert_eq(cfg.l2_line, 64);
	cr_assert_eq(cfg.l2_banks, 8);
	cr_assert_eq(cfg.context_len, 8);
	cr_assert_eq(cfg.context_after, 8);
	cr_assert_eq(msr_config_strands(&cfg), 64);
	cr_assert_eq(cfg.step_lookahead, (size_t)1 << 20);
	cr_assert_eq(cfg.max_memory, 0, "automatic");
	cr_assert_eq(cfg.nimages, 0);
}

Test(config, loads_every_section)
{
	struct msr_config cfg;
	struct msr_error err = MSR_ERROR_INIT;
	char path[128], want[160];

	msr_config_default(&cfg);
	cr_assert_eq(load_text(&cfg,
			       "# a T2 with 4 cores\n"
			       "system:\n  cores: 4\n  threads_per_core: 2\n"
			       "  l1_line: 32\n  l2_line: 0x40\n  l2_banks: 4\n"
			       "memory:\n  - boot.img\n  - /abs/data.img\n"
			       "report: {context: 3, max_violations: 10}\n"
			       "limits:\n  step_lookahead: 1000\n  max_inflight: 77\n  mab_window: 4096\n"
			       "  max_memory: 2048\n",
			       &err, path), MSR_OK, "%s", err.cause[0].text);
	cr_assert_eq(cfg.cores, 4);
	cr_assert_eq(cfg.threads_per_core, 2);
	cr_assert_eq(cfg.l1_line, 32);
	cr_assert_eq(cfg.l2_line, 64);
	cr_assert_eq(cfg.l2_banks, 4);
	cr_assert_eq(cfg.context_len, 3);
	cr_assert_eq(cfg.max_violations, 10);
	cr_assert_eq(cfg.step_lookahead, 1000);
	cr_assert_eq(cfg.max_inflight, 77);
	cr_assert_eq(cfg.mab_window, 4096);
	cr_assert_eq(cfg.max_memory, 2048);
	cr_assert_eq(cfg.nimages, 2);
	snprintf(want, sizeof(want), "%s/boot.img", tmpdir);
	cr_assert_str_eq(cfg.images[0], want, "relative to the config file");
	cr_assert_str_eq(cfg.images[1], "/abs/data.img");
	msr_config_release(&cfg);
	cr_assert_eq(cfg.nimages, 0);
}

Test(config, partial_and_empty_files_keep_defaults)
{
	struct msr_config cfg;
	struct msr_error err = MSR_ERROR_INIT;
	char path[128];

	msr_config_default(&cfg);
	cr_assert_eq(load_text(&cfg, "", &err, path), MSR_OK);
	cr_assert_eq(load_text(&cfg, "# nothing\n", &err, path), MSR_OK);
	cr_assert_eq(load_text(&cfg, "system:\nreport:\n  context: 0\n", &err, path),
		     MSR_OK, "%s", err.cause[0].text);
	cr_assert_eq(cfg.cores, 8);
	cr_assert_eq(cfg.context_len, 0);
	cr_assert_eq(cfg.l2_banks, 8);
	msr_config_release(&cfg);
}

Test(config, missing_file)
{
	struct msr_config cfg;
	struct msr_error err = MSR_ERROR_INIT;

	msr_config_default(&cfg);
	cr_assert_eq(msr_config_load(&cfg, "/nonexistent/c.yaml", &err), MSR_E_CONFIG);
	cr_assert_str_eq(err.cause[0].where, "/nonexistent/c.yaml");
}

Test(config, errors_name_line_and_column)
{
	expect_error("system:\n  cores: 4\n  colors: 3\n", "3:3",
		     "unknown key 'colors' in section system");
	expect_error("sytem:\n  cores: 4\n", "1:1", "unknown section 'sytem'");
	expect_error("system:\n  cores: 4\n  cores: 2\n", "3:3",
		     "duplicate key 'cores' in section system");
	expect_error("report: {context: 1}\nreport: {context: 2}\n", "2:1",
		     "duplicate section 'report'");
	expect_error("system:\n  cores: eight\n", "2:10", "cores: expected an integer, got 'eight'");
	expect_error("system:\n  cores: \"8\"\n", "2:10", "quoted string");
	expect_error("system:\n  cores: [8]\n", "2:10", "expected an integer, got a list");
	expect_error("system:\n  cores: -1\n", "2:10", "expected an integer");
	expect_error("system:\n  cores: 0\n", "2:10", "system.cores=0 out of range 1..32");
	expect_error("system:\n  cores: 33\n", "2:10", "out of range");
	expect_error("system:\n  l1_line: 24\n", "2:12", "must be a power of two");
	expect_error("system:\n  cores: 99999999999999999999999\n", "2:10", "too large");
	expect_error("system:\n  cores: 32\n  threads_per_core: 16\n", "3:21",
		     "exceeds 256 strands");
	expect_error("system:\n  l1_line: 128\n", "2:12", "larger than system.l2_line=64");
	expect_error("report:\n  context: 65\n", "2:12", "out of range 0..64");
	expect_error("limits:\n  step_lookahead: 0\n", "2:19", "out of range");
	expect_error("limits:\n  max_memory: 5000000000\n", "2:15", "out of range");
	expect_error("memory: boot.img\n", "1:9", "expected a list of image file paths");
	expect_error("memory:\n  - {a: 1}\n", "2:5", "each entry must be a file path");
	expect_error("system: 8\n", "1:9", "system: expected a mapping");
	expect_error("- a\n- b\n", "1:1", "expected a mapping with sections");
	expect_error("waivers:\n  - 0123456789abcdef\n", "2:5", "each entry must be a mapping");
	expect_error("system: &a {cores: 2}\nreport: *a\n", "2:9", "aliases are not supported");
	expect_error("system:\n  cores: 4\n ] garbage\n", "3:2", "yaml syntax error");
	expect_error("system: {cores: 4\n", "2:1", "yaml syntax error");
	expect_error("\"unterminated\n", "2:1", "yaml syntax error");
	expect_error("system: {}\n---\nsystem: {}\n", "2:1", "expected one yaml document");
}

Test(config, failed_load_keeps_previous_images)
{
	struct msr_config cfg;
	struct msr_error err = MSR_ERROR_INIT;
	char path[128];

	msr_config_default(&cfg);
	cr_assert_eq(load_text(&cfg, "memory: [a.img]\n", &err, path), MSR_OK);
	cr_assert_eq(load_text(&cfg, "memory: [b.img]\nsystem: {cores: 0}\n", &err, path),
		     MSR_E_CONFIG);
	cr_assert_eq(cfg.nimages, 1);
	cr_assert(strstr(cfg.images[0], "/a.img"));
	cr_assert_eq(load_text(&cfg, "report: {context: 2}\n", &err, path), MSR_OK);
	cr_assert_eq(cfg.nimages, 1, "a file without memory: keeps the images");
	msr_config_release(&cfg);
}

/* Mutated configurations (fixed seed): loaded or rejected with a position,
 * never a crash, and a rejected file leaves the defaults. */
Test(config, garbage_yaml_fails_cleanly)
{
	static const char base[] =
		"system:\n  cores: 4\n  l2_banks: 8\nmemory: [a.img, b.img]\n"
		"report: {context: 3}\nlimits:\n  step_lookahead: 100\n";
	static const char alphabet[] = "0123456789 :-[]{},#&*!|>'\"\n\tabcxyz";
	uint64_t rng = 0x2545f4914f6cdd1dULL;
	char text[256], path[128];

	for (int iter = 0; iter < 400; iter++) {
		struct msr_config cfg;
		struct msr_error err = MSR_ERROR_INIT;
		int rc;

		memcpy(text, base, sizeof(base));
		for (int m = 0; m < 1 + iter % 3; m++) {
			rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
			text[rng % (sizeof(base) - 1)] =
				alphabet[(rng >> 32) % (sizeof(alphabet) - 1)];
		}
		msr_config_default(&cfg);
		rc = load_text(&cfg, text, &err, path);
		cr_assert(rc == MSR_OK || rc == MSR_E_CONFIG, "rc=%d for:\n%s", rc, text);
		if (rc) {
			cr_assert(strchr(err.cause[0].where, ':'), "%s", err.cause[0].where);
			cr_assert_eq(cfg.nimages, 0);
		}
		msr_config_release(&cfg);
		remove(path);
	}
}

/* ---- waivers and the context split ------------------------------------- */

Test(config, loads_waivers)
{
	struct msr_config cfg;
	struct msr_error err = MSR_ERROR_INIT;
	char path[128];

	msr_config_default(&cfg);
	cr_assert_eq(load_text(&cfg,
		"waivers:\n"
		"  - fingerprint: \"0123456789ABCDEF\"\n"
		"    reason: known RTL bug 4711\n"
		"  - kind: load-value\n"
		"    pa: 0xd000:0xd0ff\n"
		"    strand: 3\n"
		"    reason: \"scratch area, see #12\"\n"
		"  - {kind: leftover, pa: \":\", reason: end of test}\n",
		&err, path), MSR_OK, "%s", err.cause[0].text);
	cr_assert_eq(cfg.nwaivers, 3);
	cr_assert_str_eq(cfg.waiver_file, path);
	cr_assert(cfg.waivers[0].by_fingerprint);
	cr_assert_str_eq(cfg.waivers[0].fingerprint, "0123456789abcdef");
	cr_assert_str_eq(cfg.waivers[0].reason, "known RTL bug 4711");
	cr_assert_eq(cfg.waivers[0].line, 2);
	cr_assert_not(cfg.waivers[1].by_fingerprint);
	cr_assert_eq(cfg.waivers[1].kind, MSR_V_LOAD_VALUE);
	cr_assert_eq(cfg.waivers[1].pa_lo, 0xd000);
	cr_assert_eq(cfg.waivers[1].pa_hi, 0xd0ff);
	cr_assert_eq(cfg.waivers[1].strand, 3);
	cr_assert_eq(cfg.waivers[1].line, 4);
	cr_assert_eq(cfg.waivers[2].kind, MSR_V_LEFTOVER);
	cr_assert_eq(cfg.waivers[2].strand, -1);
	cr_assert_eq(cfg.waivers[2].pa_lo, 0);
	cr_assert_eq(cfg.waivers[2].pa_hi, UINT64_MAX);
	/* a later file without waivers keeps them; a failed one too */
	cr_assert_eq(load_text(&cfg, "system:\n  cores: 4\n", &err, path), MSR_OK);
	cr_assert_eq(cfg.nwaivers, 3);
	cr_assert_eq(load_text(&cfg, "waivers:\n  - {kind: nope, pa: ':', reason: x}\n",
			       &err, path), MSR_E_CONFIG);
	cr_assert_eq(cfg.nwaivers, 3);
	cr_assert_eq(load_text(&cfg, "waivers: []\n", &err, path), MSR_OK);
	cr_assert_eq(cfg.nwaivers, 0);
	msr_config_release(&cfg);
}

Test(config, waiver_errors_name_line_and_column)
{
	expect_error("waivers:\n  - fingerprint: \"0123456789abcdef\"\n", "2:5",
		     "waiver without reason");
	expect_error("waivers:\n  - kind: load-value\n    pa: ':'\n    reasons: x\n",
		     "4:5", "unknown key 'reasons' in a waiver");
	expect_error("waivers:\n  - fingerprint: \"0123\"\n    reason: x\n", "2:18",
		     "expected 16 hex digits");
	expect_error("waivers:\n  - fingerprint: \"0123456789abcdefg\"\n    reason: x\n",
		     "2:18", "expected 16 hex digits");
	expect_error("waivers:\n  - fingerprint: \"0123456789abcdeg\"\n    reason: x\n",
		     "2:18", "expected 16 hex digits");
	expect_error("waivers:\n  - kind: load-valu\n    pa: ':'\n    reason: x\n",
		     "2:11", "is not a violation kind");
	expect_error("waivers:\n  - kind: load-value\n    pa: 0x20:0x10\n    reason: x\n",
		     "3:9", "expected LO:HI");
	expect_error("waivers:\n  - kind: load-value\n    pa: 0x20\n    reason: x\n",
		     "3:9", "expected LO:HI");
	expect_error("waivers:\n  - kind: load-value\n    reason: x\n", "2:5",
		     "needs pa");
	expect_error("waivers:\n  - pa: ':'\n    reason: x\n", "2:5",
		     "needs fingerprint, or kind and pa");
	expect_error("waivers:\n  - fingerprint: \"0123456789abcdef\"\n    strand: 1\n"
		     "    reason: x\n", "2:5", "both fingerprint and kind");
	expect_error("waivers:\n  - kind: leftover\n    kind: leftover\n", "3:5",
		     "duplicate key 'kind' in a waiver");
	expect_error("waivers:\n  - {kind: leftover, pa: ':', reason: ''}\n", "2:39",
		     "reason is empty");
	expect_error("waivers:\n  - {kind: leftover, pa: ':', strand: x, reason: y}\n",
		     "2:39", "expected an integer");
	expect_error("system: {cores: 1, threads_per_core: 2}\n"
		     "waivers:\n  - {kind: leftover, pa: ':', strand: 2, reason: y}\n",
		     "3:1", "the system has 2 strands");
	expect_error("waivers: {kind: leftover}\n", "1:10", "expected a list of waivers");
	expect_error("report:\n  context: 4\n  context_before: 2\n", "3:3",
		     "both given");
}

Test(config, context_before_and_after)
{
	struct msr_config cfg;
	struct msr_error err = MSR_ERROR_INIT;
	char path[128];

	msr_config_default(&cfg);
	cr_assert_eq(load_text(&cfg, "report:\n  context: 3\n", &err, path), MSR_OK);
	cr_assert_eq(cfg.context_len, 3);
	cr_assert_eq(cfg.context_after, 3);
	cr_assert_eq(load_text(&cfg, "report:\n  context_after: 1\n  context: 5\n",
			       &err, path), MSR_OK);
	cr_assert_eq(cfg.context_len, 5);
	cr_assert_eq(cfg.context_after, 1);
	cr_assert_eq(load_text(&cfg, "report:\n  context_before: 0\n  context_after: 64\n",
			       &err, path), MSR_OK);
	cr_assert_eq(cfg.context_len, 0);
	cr_assert_eq(cfg.context_after, 64);
	msr_config_release(&cfg);
}
