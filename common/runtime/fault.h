/*
 * fault.h — named fault-injection points for the crash tests (docs/style.md: "test
 * like the system will fail").
 *
 * Test builds only: a point is compiled in only where the including file is
 * built with CZK_FAULT_INJECTION defined (the daemons are when the CMake option
 * of that name is ON, which scripts/test.sh sets and scripts/build.sh does
 * not).  Otherwise czk_fault(name) is the constant 0: it evaluates nothing
 * (name only appears under sizeof, so a variable passed as the name counts as
 * used) and nothing reads CZK_FAULT, so a production binary ignores it.
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

/* returns 0 or -EIO (action "fail"); call it through czk_fault() */
int czk_fault_point(const char *name);

#ifdef CZK_FAULT_INJECTION
#define czk_fault(name) czk_fault_point(name)
#else
/*
 * PostgreSQL's disabled injection point is ((void) name); this one also has to
 * be an int expression (`if (czk_fault("x") < 0)`), and a plain `(..., 0)` used
 * as a statement draws -Wunused-value, hence the statement expression (GNU C,
 * which gcc and clang accept; __extension__ keeps -pedantic quiet).
 */
#define czk_fault(name) __extension__ ({ (void) sizeof (name); 0; })
#endif

#endif
