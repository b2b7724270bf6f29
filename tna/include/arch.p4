// SPDX-FileCopyrightText: 2026 The tofino-cc authors
// SPDX-License-Identifier: Apache-2.0
/* tofino-cc: one source for Tofino (tna) and Tofino2 (t2na).
 * bf-p4c defines __TARGET_TOFINO__ as 1 or 2; every chip difference in the
 * project is expressed through the few macros below. */
#ifndef TOFCC_ARCH_P4
#define TOFCC_ARCH_P4

#include <core.p4>
#if __TARGET_TOFINO__ == 2
#include <t2na.p4>
#define TOFCC_TOFINO2 1
#else
#include <tna.p4>
#endif

/* Queue-metadata test hook (see test_hooks.p4). Production builds pass
 * -DTOFCC_NO_TEST_HOOKS so the override table does not exist at all. */
#ifndef TOFCC_NO_TEST_HOOKS
#define TOFCC_TEST_HOOKS 1
#endif

#endif
