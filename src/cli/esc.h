/* esc.h -- strings from the target or its files, made safe for a terminal. */
#ifndef CLI_ESC_H
#define CLI_ESC_H

/* @s with every control byte (below 0x20 but tab, and 0x7f) and every byte of
 * an invalid UTF-8 sequence written as \xNN, and a backslash that starts such
 * a form doubled, as `git` and `ls -q` do: a thread name, a module path or a
 * symbol can then move no cursor and change no title.  The result lives in
 * one of a few rotating buffers, valid until the 8th call after; NULL gives
 * "(null)". */
const char *cli_esc(const char *s);

#endif
