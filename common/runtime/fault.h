/*
 * fault.h — named fault-injection points for the crash tests (STYLE.md: "test
 * like the system will fail").
 *
 * A point is compiled in only where the including file is built with
 * CZK_FAULT_INJECTION defined (the daemons are, when the CMake option of that
 * name is ON); elsewhere czk_fault() is a constant 0 and costs nothing.
 *
 * At run time the environment variable CZK_FAULT selects points and actions:
 *     CZK_FAULT="gpud.after_accept_journal:exit,finalizer.before_rename:sleep=2000"
 * Actions:  exit       _exit(99) (no cleanup, like a crash)
 *           abort      abort() (SIGABRT, core dump)
 *           kill       raise(SIGKILL)
 *           sleep=MS   sleep MS milliseconds, then continue
 *           fail       czk_fault() returns -EIO; the caller fails that step
 * An optional "@N" after the action fires only on the N-th time the point is
 * reached (1-based), e.g. "gpud.after_result_sent:exit@2".
 * Every firing is logged with the point's name first.
 */
#ifndef CZK_FAULT_H
#define CZK_FAULT_H

/* always available; returns 0 or -EIO (action "fail") */
int czk_fault_point(const char *name);

#ifdef CZK_FAULT_INJECTION
#define czk_fault(name) czk_fault_point(name)
#else
#define czk_fault(name) 0
#endif

#endif
