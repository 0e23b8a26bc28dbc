// SPDX-License-Identifier: GPL-2.0
/* Harness self-test: one passing and one failing KUnit case. */
#include <kunit/test.h>

static void kwq_broken_passes(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, 1, 1);
}

static void kwq_broken_fails(struct kunit *test)
{
	KUNIT_EXPECT_EQ_MSG(test, 1, 2, "this case fails on purpose");
}

static struct kunit_case kwq_broken_cases[] = {
	KUNIT_CASE(kwq_broken_passes),
	KUNIT_CASE(kwq_broken_fails),
	{}
};

static struct kunit_suite kwq_broken_suite = {
	.name = "kwq_broken",
	.test_cases = kwq_broken_cases,
};

kunit_test_suite(kwq_broken_suite);

MODULE_DESCRIPTION("kwq harness self-test: a failing KUnit case");
MODULE_LICENSE("GPL");
