/* tessera CLI — a progress line on stderr while a long phase runs.
 *
 * When stderr is a terminal, a helper thread rewrites one line ("\r"-updated) every 0.5 s
 * with the current phase and its elapsed seconds, once the phase has run for 1 s. The line is
 * erased when the phase ends. Elsewhere (pipes, files) nothing is printed.
 */
#ifndef TESSERA_TOOLS_PROGRESS_H
#define TESSERA_TOOLS_PROGRESS_H

#include <pthread.h>

/** Progress state; one per run. */
typedef struct {
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  char phase[96]; /**< current phase; "" when none runs */
  double start;   /**< when the phase began (monotonic seconds) */
  int running;    /**< the helper thread exists */
  int stop;       /**< asks the helper thread to end */
  int shown;      /**< a progress line is on the terminal */
} cli_progress_t;

/** Prepares `p` and starts the helper thread when stderr is a terminal. */
void progress_init(cli_progress_t *p);

/** Begins phase `name` (printf-style), ending the previous one; NULL just ends it. */
void progress_phase(cli_progress_t *p, const char *fmt, ...);

/** Ends the current phase, erasing the line, and stops the helper thread. */
void progress_end(cli_progress_t *p);

/** Monotonic clock in seconds. */
double progress_now(void);

#endif
