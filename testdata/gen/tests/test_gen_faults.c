/*
 * test_gen_faults.c - every fault kind, injected once, shows up exactly as
 * the sidecar says: the independent replay finds the data-level and
 * protocol faults at the recorded strand and instruction, TSO-level faults
 * leave the data consistent (their proof is for the TSO checker), and the
 * sidecar is well-formed YAML with one entry per injected fault.
 */
#include "gen_test_util.h"

#include <unistd.h>
#include <yaml.h>

struct side_entry {
	char fault[32], kind[32];
	uint64_t strand, iseq, event;
};

struct side {
	unsigned n;
	struct side_entry e[256];
	uint64_t injected;
};

static const char *scalar(yaml_document_t *d, yaml_node_t *n)
{
	(void)d;
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value
						: "";
}

static yaml_node_t *map_get(yaml_document_t *d, yaml_node_t *m, const char *k)
{
	if (!m || m->type != YAML_MAPPING_NODE)
		return NULL;
	for (yaml_node_pair_t *p = m->data.mapping.pairs.start;
	     p < m->data.mapping.pairs.top; p++)
		if (!strcmp(scalar(d, yaml_document_get_node(d, p->key)), k))
			return yaml_document_get_node(d, p->value);
	return NULL;
}

static void load_side(const char *path, struct side *s)
{
	FILE *f = fopen(path, "rb");
	yaml_parser_t p;
	yaml_document_t d;
	yaml_node_t *root, *seq;

	memset(s, 0, sizeof(*s));
	cr_assert_not_null(f, "sidecar %s", path);
	yaml_parser_initialize(&p);
	yaml_parser_set_input_file(&p, f);
	cr_assert(yaml_parser_load(&p, &d), "sidecar is not YAML: %s", p.problem);
	root = yaml_document_get_root_node(&d);
	cr_assert_str_eq(scalar(&d, map_get(&d, root, "generator")), "msync-gen");
	seq = map_get(&d, root, "faults");
	cr_assert(seq && seq->type == YAML_SEQUENCE_NODE);
	for (yaml_node_item_t *it = seq->data.sequence.items.start;
	     it < seq->data.sequence.items.top && s->n < 256; it++) {
		yaml_node_t *e = yaml_document_get_node(&d, *it);
		struct side_entry *x = &s->e[s->n++];

		snprintf(x->fault, sizeof(x->fault), "%s", scalar(&d, map_get(&d, e, "fault")));
		snprintf(x->kind, sizeof(x->kind), "%s", scalar(&d, map_get(&d, e, "kind")));
		x->strand = strtoull(scalar(&d, map_get(&d, e, "strand")), NULL, 10);
		x->iseq = strtoull(scalar(&d, map_get(&d, e, "iseq")), NULL, 10);
		x->event = strtoull(scalar(&d, map_get(&d, e, "event")), NULL, 10);
		cr_assert_str_eq(scalar(&d, map_get(&d, e, "pa")) + 0, scalar(&d, map_get(&d, e, "pa")));
		cr_assert(strncmp(scalar(&d, map_get(&d, e, "pa")), "0x", 2) == 0);
	}
	s->injected = strtoull(scalar(&d, map_get(&d, map_get(&d, root, "summary"),
						  "injected")), NULL, 10);
	yaml_document_delete(&d);
	yaml_parser_delete(&p);
	fclose(f);
}

static void tmp_path(char *buf, size_t n, const char *tag)
{
	snprintf(buf, n, "/tmp/msync-gen-test-%d-%s.yaml", (int)getpid(), tag);
}

struct fault_param {
	char spec[24];
	char kind[32];          /* expected sidecar kind */
	char oracle_kind[32];   /* what the replay finds; "" = nothing */
};

ParameterizedTestParameters(gen_faults, each_kind_once)
{
	static struct fault_param p[] = {
		{"load-value@500", "load-value", "load-value"},
		{"store-data@500", "store-data", "store-data"},
		{"bad-bypass@500", "load-value", "load-value"},
		{"store-order@500", "tso-store-order", "order:store-order"},
		{"lost-inv@500", "leftover", "leftover"},
		{"stale-l1@500", "tso-load-order", ""},
		{"atomic-break@500", "tso-atomicity", ""},
		{"membar@500", "tso-membar", ""},
	};

	return cr_make_param_array(struct fault_param, p, sizeof(p) / sizeof(p[0]));
}

ParameterizedTest(struct fault_param *p, gen_faults, each_kind_once)
{
	struct gen_config cfg;
	struct gen_inject inj;
	struct msr_error err = MSR_ERROR_INIT;
	struct gen_run r;
	struct side *s = calloc(1, sizeof(*s));
	char path[128];

	gen_config_default(&cfg);
	cfg.max_events = 30000;
	tmp_path(path, sizeof(path), p->kind);
	cr_assert_eq(gen_inject_parse(p->spec, &inj, &err), MSR_OK);
	gen_run_cfg(&cfg, &inj, 1, path, &r);
	cr_assert_eq(r.injected, 1, "%s: injected=%llu", p->spec,
		     (unsigned long long)r.injected);
	load_side(path, s);
	cr_assert_eq(s->n, 1);
	cr_assert_eq(s->injected, 1);
	cr_assert_str_eq(s->e[0].kind, p->kind);
	cr_assert_eq(strncmp(s->e[0].fault, p->spec, strlen(s->e[0].fault)), 0);
	if (p->oracle_kind[0]) {
		const struct oracle_finding *f = oracle_finding_at(r.o, 0);

		cr_assert_eq(oracle_nfindings(r.o), 1, "%s: findings=%u first=%s",
			     p->spec, oracle_nfindings(r.o), f ? f->kind : "-");
		cr_assert_str_eq(f->kind, p->oracle_kind);
		cr_assert_eq(f->strand, s->e[0].strand);
		/* the replay names the next instruction for leftovers and
		 * out-of-order commits; it names the load or store itself for
		 * data faults */
		if (strcmp(p->oracle_kind, "leftover") &&
		    strcmp(p->oracle_kind, "order:store-order"))
			cr_assert_eq(f->iseq, s->e[0].iseq, "iseq oracle=%llu side=%llu",
				     (unsigned long long)f->iseq,
				     (unsigned long long)s->e[0].iseq);
	} else {
		gen_assert_clean(&r);
	}
	cr_assert_gt(s->e[0].event, 0);
	cr_assert_lt(s->e[0].event, r.st.events);
	oracle_free(r.o);
	unlink(path);
	free(s);
}

Test(gen_faults, rates_inject_many_and_all_kinds_mix)
{
	static const char *const specs[] = {
		"load-value:0.002", "store-data:0.002", "stale-l1:0.001",
		"store-order:0.001", "bad-bypass:0.001", "lost-inv:0.001",
		"atomic-break:0.001", "membar:0.001",
	};
	struct gen_inject inj[8];
	struct msr_error err = MSR_ERROR_INIT;
	struct gen_config cfg;
	struct gen_run r;
	struct side *s = calloc(1, sizeof(*s));
	unsigned seen[GEN_FK_COUNT] = {0};
	char path[128];

	for (unsigned i = 0; i < 8; i++)
		cr_assert_eq(gen_inject_parse(specs[i], &inj[i], &err), MSR_OK);
	gen_config_default(&cfg);
	cfg.max_events = 150000;
	tmp_path(path, sizeof(path), "mix");
	gen_run_cfg(&cfg, inj, 8, path, &r);
	load_side(path, s);
	cr_assert_eq(s->injected, r.injected);
	cr_assert_eq(s->n, r.injected);
	cr_assert_lt(s->n, 256);
	for (unsigned i = 0; i < s->n; i++)
		for (unsigned k = 0; k < GEN_FK_COUNT; k++)
			if (!strcmp(s->e[i].fault, gen_fault_name(k)))
				seen[k]++;
	for (unsigned k = 0; k < GEN_FK_COUNT; k++)
		cr_assert_gt(seen[k], 0, "no %s fault injected", gen_fault_name(k));
	cr_assert_eq(oracle_count(r.o, "load-value"),
		     seen[GEN_FK_LOAD_VALUE] + seen[GEN_FK_BAD_BYPASS]);
	cr_assert_eq(oracle_count(r.o, "store-data"), seen[GEN_FK_STORE_DATA]);
	cr_assert_eq(oracle_count(r.o, "order:store-order"), seen[GEN_FK_STORE_ORDER]);
	cr_assert_eq(oracle_count(r.o, "leftover"), seen[GEN_FK_LOST_INV]);
	cr_assert_eq(oracle_nfindings(r.o), 
		     seen[GEN_FK_LOAD_VALUE] + seen[GEN_FK_BAD_BYPASS] +
		     seen[GEN_FK_STORE_DATA] + seen[GEN_FK_STORE_ORDER] +
		     seen[GEN_FK_LOST_INV]);
	oracle_free(r.o);
	unlink(path);
	free(s);
}

Test(gen_faults, bad_specs_are_rejected)
{
	static const char *const bad[] = {
		"stale", "load-value:0", "load-value:2", "load-value:x",
		"membar@", "membar@1x", "",
	};
	struct gen_inject inj;

	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct msr_error err = MSR_ERROR_INIT;

		cr_assert_eq(gen_inject_parse(bad[i], &inj, &err), MSR_E_USAGE,
			     "accepted '%s'", bad[i]);
		cr_assert_gt(strlen(err.cause[0].text), 0);
	}
}
