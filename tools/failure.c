/* tessera CLI — the failure object of a --json run (see failure.h). */
#define _POSIX_C_SOURCE 200809L
#include "failure.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "json.h"

static const char prefix[] = "tessera: ", warning[] = "warning:",
                  hint[] = "Run 'tessera --help' for usage.";

/* Cuts a UTF-8 sequence left incomplete at the end of `s` (a message cut at its length). */
static void trim_utf8(char *s) {
  size_t n = strlen(s), k = 0;
  while (k < n && k < 4 && ((unsigned char)s[n - 1 - k] & 0xC0) == 0x80) k++;
  if (k == n || !((unsigned char)s[n - 1 - k] & 0x80)) return; /* ASCII before: nothing open */
  const unsigned char lead = (unsigned char)s[n - 1 - k];
  const size_t len = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
  if (k + 1 < len) s[n - 1 - k] = '\0';
}

/* A whole line received: a "tessera: " line starts the message anew (a warning starts nothing
 * kept), any other continues the one before it; the usage hint is left out. */
static void take_line(cli_failure_t *w) {
  w->line[w->len] = '\0';
  w->len = 0;
  const char *l = w->line;
  const size_t np = sizeof prefix - 1, nw = sizeof warning - 1;
  if (!strncmp(l, prefix, np)) {
    w->keeping = strncmp(l + np, warning, nw) != 0;
    if (w->keeping) snprintf(w->message, sizeof w->message, "%s", l + np);
  } else if (w->keeping && l[0] && strcmp(l, hint)) {
    const size_t used = strlen(w->message);
    snprintf(w->message + used, sizeof w->message - used, " %s", l);
  }
  trim_utf8(w->message);
}

/* Bytes read from the pipe: on to the real stderr whole, and into lines. */
static void pass(cli_failure_t *w, const char *buf, size_t n) {
  for (size_t done = 0; done < n;) {
    const ssize_t k = write(w->saved, buf + done, n - done);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break; /* the real stderr is gone: the lines are still kept */
    done += (size_t)k;
  }
  for (size_t i = 0; i < n; i++) {
    if (buf[i] == '\n')
      take_line(w);
    else if (buf[i] != '\r' && w->len + 1 < sizeof w->line)
      w->line[w->len++] = buf[i];
  }
}

/* The thread: passes the pipe on until every writer closed it or, once the end is signalled,
 * until the pipe holds nothing more (a child process may still hold a writer). */
static void *watch(void *arg) {
  cli_failure_t *w = arg;
  char buf[4096];
  struct pollfd fds[2] = {{.fd = w->pipe_r, .events = POLLIN}, {.fd = w->stop_r, .events = POLLIN}};
  for (;;) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[0].revents) {
      const ssize_t n = read(w->pipe_r, buf, sizeof buf);
      if (n > 0) {
        pass(w, buf, (size_t)n);
        continue;
      }
      if (n == 0 || (errno != EINTR && errno != EAGAIN)) break;
    }
    if (fds[1].revents) {
      ssize_t n;
      while ((n = read(w->pipe_r, buf, sizeof buf)) > 0) pass(w, buf, (size_t)n);
      break;
    }
  }
  return NULL;
}

static void close_all(cli_failure_t *w) {
  close(w->pipe_r), close(w->stop_r), close(w->stop_w), close(w->saved);
}

void cli_failure_watch(cli_failure_t *w) {
  memset(w, 0, sizeof *w);
  int out[2], stop[2];
  if (pipe(out)) return;
  if (pipe(stop)) {
    close(out[0]), close(out[1]);
    return;
  }
  fflush(stderr);
  w->pipe_r = out[0], w->stop_r = stop[0], w->stop_w = stop[1];
  w->saved = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
  /* the reading ends are this process's alone; the pipe read without blocking once stopped */
  fcntl(out[0], F_SETFD, FD_CLOEXEC), fcntl(stop[0], F_SETFD, FD_CLOEXEC);
  fcntl(stop[1], F_SETFD, FD_CLOEXEC);
  fcntl(out[0], F_SETFL, O_NONBLOCK);
  if (w->saved < 0 || dup2(out[1], STDERR_FILENO) < 0) {
    close(out[1]);
    close_all(w);
    return;
  }
  close(out[1]);
  if (pthread_create(&w->thread, NULL, watch, w)) {
    dup2(w->saved, STDERR_FILENO);
    close_all(w);
    return;
  }
  w->running = 1;
}

void cli_failure_end(cli_failure_t *w, const char *command, const char *routine, int status) {
  if (w->running) {
    fflush(stderr);
    dup2(w->saved, STDERR_FILENO); /* the pipe's last writer closed, but for children */
    while (write(w->stop_w, "", 1) < 0 && errno == EINTR) {
    }
    pthread_join(w->thread, NULL);
    close_all(w);
    if (w->len) take_line(w);
    w->running = 0;
  }
  if (status == 0 || !w->message[0]) return;
  printf("{\"command\": \"%s\", \"routine\": \"%s\", \"status\": %d, \"message\": ", command,
         routine, status);
  json_put_string(stdout, w->message);
  printf("}\n");
  fflush(stdout);
}
