/* tessera CLI — with --json, a command that fails still prints one JSON object: its status and
 * the message it gave.
 *
 * The messages are written to stderr from many places (the CLI's checks, the library's
 * configuration, the runtime), so the watch passes the process's stderr through a pipe: a
 * thread copies every byte on to the real stderr as it comes and keeps the last message (a line
 * "tessera: ...", warnings aside, with the lines that continue it). At the end, a failed command
 * that said something prints {"command", "routine", "status", "message"} on stdout; under mpirun
 * each process that explained the failure prints its own.
 */
#ifndef TESSERA_TOOLS_FAILURE_H
#define TESSERA_TOOLS_FAILURE_H

#include <pthread.h>
#include <stddef.h>

/** Length of the message kept (longer ones are cut). */
enum { CLI_FAILURE_MESSAGE = 2048 };

/** A watch of stderr, owned by main(). */
typedef struct {
  int running;
  int saved;          /**< the real stderr */
  int pipe_r, stop_r; /**< what stderr receives; the end's signal */
  int stop_w;
  pthread_t thread;
  int keeping;                       /**< the current line continues a message (not a warning) */
  char line[CLI_FAILURE_MESSAGE];    /**< the line being received */
  size_t len;                        /**< its length */
  char message[CLI_FAILURE_MESSAGE]; /**< the last message, "tessera: " left out */
} cli_failure_t;

/** Starts the watch: stderr into a pipe, passed on by a thread. When the pipe or the thread
 *  cannot be made, stderr stays as it is and the watch keeps nothing. */
void cli_failure_watch(cli_failure_t *w);

/** Ends the watch (stderr back as it was) and, when `status` is not 0 and a message was kept,
 *  prints the failure object of `command` running `routine` on stdout. */
void cli_failure_end(cli_failure_t *w, const char *command, const char *routine, int status);

#endif
