// SPDX-License-Identifier: GPL-2.0
/*
 * A QEMU TCG plugin for tools/bench/insnprof.sh: guest instructions
 * executed, per translation block start address, written at exit as
 * "ADDRESS COUNT" lines (hex, decimal). Each block's count goes up by its
 * length each time it runs (an inline add, no callback); a block left
 * early by an exception still counts whole, which is rare enough to
 * ignore. QEMU runs vCPUs in threads (MTTCG), so two vCPUs running one
 * block at once can lose an add: counts are exact with -smp 1 and off by
 * well under 1% otherwise.
 *
 * Written against plugin API version 1 (QEMU 7.2, Debian 12), whose few
 * declarations used here are spelled out: Debian ships no qemu-plugin.h.
 *
 * Argument: out=FILE (default insnprof.out).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_info_t;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id,
					       struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
					   qemu_plugin_vcpu_tb_trans_cb_t cb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb,
					      enum qemu_plugin_op op,
					      void *ptr, uint64_t imm);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
				    qemu_plugin_udata_cb_t cb, void *userdata);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

/* One counter per (address, length): a block translated again shares it. */
struct block {
	uint64_t pc, len, insns;
	struct block *next;
};

#define BUCKETS (1u << 20)
static struct block *table[BUCKETS];
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static const char *out_path = "insnprof.out";

static struct block *block_of(uint64_t pc, uint64_t len)
{
	unsigned int h = (unsigned int)((pc * 0x9e3779b97f4a7c15ull) >> 44) &
			 (BUCKETS - 1);
	struct block *b;

	for (b = table[h]; b; b = b->next)
		if (b->pc == pc && b->len == len)
			return b;
	b = calloc(1, sizeof(*b));
	if (!b)
		abort();
	b->pc = pc;
	b->len = len;
	b->next = table[h];
	table[h] = b;
	return b;
}

/* vCPU threads may translate at once: the table has a lock. */
static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t len = qemu_plugin_tb_n_insns(tb);
	struct block *b;

	(void)id;
	pthread_mutex_lock(&table_lock);
	b = block_of(qemu_plugin_tb_vaddr(tb), len);
	pthread_mutex_unlock(&table_lock);
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
						 &b->insns, len);
}

static void on_quit(qemu_plugin_id_t id, void *userdata)
{
	FILE *f = fopen(out_path, "w");
	struct block *b;
	unsigned int i;

	(void)id;
	(void)userdata;
	if (!f) {
		perror(out_path);
		return;
	}
	for (i = 0; i < BUCKETS; i++)
		for (b = table[i]; b; b = b->next)
			if (b->insns)
				fprintf(f, "%llx %llu\n",
					(unsigned long long)b->pc,
					(unsigned long long)b->insns);
	fclose(f);
}

__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const struct qemu_info_t *info,
			int argc, char **argv)
{
	int i;

	(void)info;
	for (i = 0; i < argc; i++)
		if (!strncmp(argv[i], "out=", 4))
			out_path = argv[i] + 4;
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, on_quit, NULL);
	return 0;
}
