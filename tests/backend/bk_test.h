/*
 * bk_test.h — what the backend and trace tests share: tests/common/test_util.h
 * with CHECK exiting at the first failure (T_STOP_AT_FAILURE) and its seeded
 * generator (t_seed, t_rand64).
 */
#ifndef CZK_TESTS_BACKEND_BK_TEST_H
#define CZK_TESTS_BACKEND_BK_TEST_H

#define T_STOP_AT_FAILURE
#include "tests/common/test_util.h"

#endif
