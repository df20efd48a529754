/* crashpoint.h -- test-only: jemattach crashes on purpose at a named engine step.
 *
 * With JEMATTACH_TEST_CRASH_AT=<step> in the environment, att_crashpoint(step)
 * raises SIGSEGV in the tracer there, so tests can show that the target
 * survives our death at every step of a call.  Steps: seized, hijacked,
 * frame, regs, mask, syscall, write, sigreturn, restored.  <step>:int
 * raises SIGINT there instead, as a Ctrl-C at that instant would.
 */
#ifndef ATTACH_CRASHPOINT_H
#define ATTACH_CRASHPOINT_H

void att_crashpoint(const char *step);

#endif
