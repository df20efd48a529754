/* jemattach/api.h -- what marks libjemattach's public face.
 *
 * The library is compiled with -fvisibility=hidden, so nothing is exported
 * unless declared between JMA_API_BEGIN and JMA_API_END: every public header
 * puts its declarations there, and a function added to a public header is
 * exported without further marking.  The version script
 * (src/libjemattach.map) then exports only the jma_* names among them.
 */
#ifndef JEMATTACH_API_H
#define JEMATTACH_API_H

#define JMA_API_BEGIN _Pragma("GCC visibility push(default)")
#define JMA_API_END _Pragma("GCC visibility pop")

#endif
