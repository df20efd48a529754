/* crashpoint.h -- test-only: jemattach crashes on purpose at a named engine step.
 *
 * Only in the test build of the tool (make's $(BUILD)/hooks/jemattach, its
 * engine compiled with -DJMA_TEST_HOOKS): with JEMATTACH_TEST_CRASH_AT=<step>
 * in the environment, att_crashpoint(step) raises SIGSEGV in the tracer
 * there, so tests can show that the target survives our death at every step
 * of a call.  Steps: seized, hijacked, frame, regs, mask, syscall, write,
 * sigreturn, restored.  <step>:int raises SIGINT there instead, as a Ctrl-C
 * at that instant would; <step>:int:N at the Nth pass of the step only.
 * Everywhere else -- the library, the tool, the server module, what is
 * installed -- the calls compile to nothing.
 */
#ifndef ATTACH_CRASHPOINT_H
#define ATTACH_CRASHPOINT_H

#ifdef JMA_TEST_HOOKS
void att_crashpoint(const char *step);
#else
#define att_crashpoint(step) ((void)(step))
#endif

#endif
