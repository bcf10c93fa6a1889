/* tessera CLI — progress line on a terminal. */
#define _POSIX_C_SOURCE 200809L
#include "progress.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/** Seconds between updates, and how long a phase runs before a line appears. */
#define PROGRESS_PERIOD 0.5
#define PROGRESS_DELAY 1.0

double progress_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/** Erases the progress line if one is shown. Called with the mutex held. */
static void erase(cli_progress_t *p) {
  if (!p->shown) return;
  fputs("\r\033[K", stderr);
  fflush(stderr);
  p->shown = 0;
}

static void *progress_main(void *arg) {
  cli_progress_t *p = arg;
  pthread_mutex_lock(&p->mu);
  while (!p->stop) {
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_nsec += (long)(PROGRESS_PERIOD * 1e9);
    until.tv_sec += until.tv_nsec / 1000000000L;
    until.tv_nsec %= 1000000000L;
    pthread_cond_timedwait(&p->cv, &p->mu, &until);
    double elapsed = progress_now() - p->start;
    if (!p->stop && p->phase[0] && elapsed >= PROGRESS_DELAY) {
      fprintf(stderr, "\r\033[Ktessera: %s %.1f s", p->phase, elapsed);
      fflush(stderr);
      p->shown = 1;
    }
  }
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

void progress_init(cli_progress_t *p) {
  memset(p, 0, sizeof *p);
  if (!isatty(STDERR_FILENO)) return;
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_init(&p->cv, &attr);
  pthread_condattr_destroy(&attr);
  pthread_mutex_init(&p->mu, NULL);
  p->running = pthread_create(&p->thread, NULL, progress_main, p) == 0;
  if (!p->running) {
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
  }
}

void progress_phase(cli_progress_t *p, const char *fmt, ...) {
  if (!p->running) return;
  pthread_mutex_lock(&p->mu);
  erase(p);
  p->phase[0] = '\0';
  if (fmt) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->phase, sizeof p->phase, fmt, ap);
    va_end(ap);
  }
  p->start = progress_now();
  pthread_mutex_unlock(&p->mu);
}

void progress_end(cli_progress_t *p) {
  if (!p->running) return;
  pthread_mutex_lock(&p->mu);
  p->stop = 1;
  erase(p);
  pthread_cond_signal(&p->cv);
  pthread_mutex_unlock(&p->mu);
  pthread_join(p->thread, NULL);
  pthread_cond_destroy(&p->cv);
  pthread_mutex_destroy(&p->mu);
  p->running = 0;
}
