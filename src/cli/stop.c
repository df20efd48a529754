/* stop.c -- Ctrl-C for the commands that run for a while (prof window,
 * track and sample, watch): SIGINT, SIGTERM and SIGHUP set cli_stop, which
 * they poll, and end them with what they have; the handlers they replaced
 * come back after (a shell runs more commands). */
#include <signal.h>
#include <stdbool.h>

#include "cli.h"

volatile sig_atomic_t cli_stop;

static const int stop_sigs[] = { SIGINT, SIGTERM, SIGHUP };

static void on_stop(int sig)
{
	cli_stop = sig;
}

void cli_stop_catch(struct cli_stop_saved *sv, bool ignore_pipe)
{
	struct sigaction sa = { .sa_handler = on_stop }, ign = { .sa_handler = SIG_IGN };

	cli_stop = 0;
	sigemptyset(&sa.sa_mask);
	for (int i = 0; i < 3; i++)
		sigaction(stop_sigs[i], &sa, &sv->old[i]);
	sv->pipe = ignore_pipe;
	if (ignore_pipe)
		sigaction(SIGPIPE, &ign, &sv->old[3]);
}

void cli_stop_release(const struct cli_stop_saved *sv)
{
	for (int i = 0; i < 3; i++)
		sigaction(stop_sigs[i], &sv->old[i], NULL);
	if (sv->pipe)
		sigaction(SIGPIPE, &sv->old[3], NULL);
}
