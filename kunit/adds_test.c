// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit cases for &struct kwq_config.max_items, which bounds the keys a
 * queue holds (ready, waiting or processing), not the adds: on a full
 * queue every kind of add of a key it holds is taken as usual, and every
 * kind of add that would queue one more key is refused with -ENOSPC and
 * changes nothing, whatever the key's own state (new, idle with a
 * failure count, dead); a key's last failure still moves it to the dead
 * set.
 */

#include <kunit/test.h>
#include <linux/kwq.h>

#include "kwq_test.h"

KUNIT_ARRAY_PARAM(kt_add, kt_adds, kt_add_desc);

static void full_queue_takes_adds_of_its_own_keys_only(struct kunit *test)
{
	static const char * const held[] = { "r", "p", "w" };
	const struct kt_add *a = test->param_value;
	/* "r", "p" and "w" fill it; "i" and "d" are not queued. */
	struct kwq_config cfg = { .max_items = 3 };
	struct kwq *q = kt_every_state(test, &cfg, &(struct kwq_item){});
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(held); i++)
		KUNIT_EXPECT_EQ_MSG(test, 0, a->add(q, held[i]), "%s of %s",
				    a->name, held[i]);
	KUNIT_EXPECT_EQ_MSG(test, -ENOSPC, a->add(q, "new"), "%s", a->name);
	KUNIT_EXPECT_EQ(test, 0U, kt_state(q, "new"));
	KUNIT_EXPECT_EQ(test, (u32)KWQ_KEY_PROCESSING, kt_state(q, "p"));
	if (a->limited) {
		/*
		 * "i" and "d" are at max_retries (1): this failure is their
		 * last, to the dead set, which needs no room in the queue.
		 */
		KUNIT_EXPECT_EQ(test, 0, a->add(q, "i"));
		KUNIT_EXPECT_EQ(test, 0, a->add(q, "d"));
		KUNIT_EXPECT_EQ(test, (u32)KWQ_KEY_DEAD, kt_state(q, "i"));
		KUNIT_EXPECT_EQ(test, 2, kt_requeues(q, "i"));
		KUNIT_EXPECT_EQ(test, 2ULL, KT_STAT(test, q, dead));
		return;
	}
	/* Any other add would queue them: the idle one, the dead revived. */
	KUNIT_EXPECT_EQ_MSG(test, -ENOSPC, a->add(q, "i"), "%s", a->name);
	KUNIT_EXPECT_EQ_MSG(test, -ENOSPC, a->add(q, "d"), "%s", a->name);
	KUNIT_EXPECT_EQ(test, (u32)KWQ_KEY_IDLE, kt_state(q, "i"));
	KUNIT_EXPECT_EQ(test, 1, kt_requeues(q, "i"));
	KUNIT_EXPECT_EQ(test, (u32)KWQ_KEY_DEAD, kt_state(q, "d"));
	KUNIT_EXPECT_EQ(test, 1ULL, KT_STAT(test, q, dead));
}

static struct kunit_case kwq_adds_cases[] = {
	KUNIT_CASE_PARAM(full_queue_takes_adds_of_its_own_keys_only,
			 kt_add_gen_params),
	{}
};

static struct kunit_suite kwq_adds_suite = {
	.name = "kwq_adds",
	.test_cases = kwq_adds_cases,
};

kunit_test_suite(kwq_adds_suite);
