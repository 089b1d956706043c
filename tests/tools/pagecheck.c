/* SPDX-License-Identifier: MIT */
/* pagecheck: loads a web page in headless Chromium and says whether it is whole: every <img>
 * loaded (complete, with a natural width), no console error or warning, no uncaught exception,
 * no error in the browser's log (a resource that failed to load is one). It drives the browser
 * over the DevTools protocol on a pipe (--remote-debugging-pipe: commands into the browser's
 * fd 3, replies and events out of its fd 4, each message ended by a NUL byte).
 *
 * Usage: pagecheck [--browser PATH] [--min-images N] [--timeout S] URL
 * Prints what it found; exit 0 when the page is whole, 1 when not, 2 on a usage or browser
 * failure. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int to_fd = -1, from_fd = -1;
static char *inbuf;
static size_t in_len, in_cap;
static double deadline;
static const char *session;
static int n_errors;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void send_cmd(int id, const char *method, json_t *params) {
    json_t *m = json_pack("{s:i, s:s, s:o}", "id", id, "method", method, "params",
                          params ? params : json_object());
    if (session) json_object_set_new(m, "sessionId", json_string(session));
    char *s = json_dumps(m, JSON_COMPACT);
    size_t n = strlen(s) + 1; /* with its NUL */
    for (size_t off = 0; off < n;) {
        ssize_t w = write(to_fd, s + off, n - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            fprintf(stderr, "pagecheck: cannot write to the browser: %s\n", strerror(errno));
            exit(2);
        }
        off += (size_t)w;
    }
    free(s);
    json_decref(m);
}

/* The next message from the browser, or NULL when the deadline passes or the pipe closes. */
static json_t *next_msg(void) {
    for (;;) {
        char *nul = in_len ? memchr(inbuf, 0, in_len) : NULL;
        if (nul) {
            json_t *m = json_loads(inbuf, 0, NULL);
            size_t used = (size_t)(nul - inbuf) + 1;
            memmove(inbuf, inbuf + used, in_len - used);
            in_len -= used;
            if (m) return m;
            continue;
        }
        double left = deadline - now();
        if (left <= 0) return NULL;
        struct pollfd p = {.fd = from_fd, .events = POLLIN};
        int r = poll(&p, 1, (int)(left * 1000) + 1);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return NULL;
        if (in_cap - in_len < 65536) {
            in_cap = in_cap * 2 + 65536;
            inbuf = realloc(inbuf, in_cap);
            if (!inbuf) exit(2);
        }
        ssize_t n = read(from_fd, inbuf + in_len, in_cap - in_len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return NULL;
        in_len += (size_t)n;
    }
}

/* Reports the events that say the page is not whole. */
static void look_at_event(json_t *m) {
    const char *method = json_string_value(json_object_get(m, "method"));
    json_t *p = json_object_get(m, "params");
    if (!method) return;
    if (strcmp(method, "Runtime.consoleAPICalled") == 0) {
        const char *type = json_string_value(json_object_get(p, "type"));
        if (type &&
            (!strcmp(type, "error") || !strcmp(type, "warning") || !strcmp(type, "assert"))) {
            json_t *a0 = json_array_get(json_object_get(p, "args"), 0);
            const char *v = json_string_value(json_object_get(a0, "value"));
            printf("console %s: %s\n", type, v ? v : "(not a string)");
            n_errors++;
        }
    } else if (strcmp(method, "Runtime.exceptionThrown") == 0) {
        json_t *d = json_object_get(p, "exceptionDetails");
        printf("exception: %s\n", json_string_value(json_object_get(d, "text")));
        n_errors++;
    } else if (strcmp(method, "Log.entryAdded") == 0) {
        json_t *e = json_object_get(p, "entry");
        const char *level = json_string_value(json_object_get(e, "level"));
        if (level && (!strcmp(level, "error") || !strcmp(level, "warning"))) {
            printf("log %s: %s %s\n", level, json_string_value(json_object_get(e, "text")),
                   json_string_value(json_object_get(e, "url")) ?: "");
            n_errors++;
        }
    }
}

/* Waits for the reply to command id (looking at every event on the way); NULL on timeout. */
static json_t *reply(int id) {
    json_t *m;
    while ((m = next_msg())) {
        json_t *mid = json_object_get(m, "id");
        if (json_is_integer(mid) && json_integer_value(mid) == id) {
            if (json_object_get(m, "error")) {
                char *s = json_dumps(json_object_get(m, "error"), JSON_COMPACT);
                fprintf(stderr, "pagecheck: the browser refused command %d: %s\n", id, s);
                free(s);
                exit(2);
            }
            return m;
        }
        look_at_event(m);
        json_decref(m);
    }
    fprintf(stderr, "pagecheck: no reply from the browser to command %d\n", id);
    exit(2);
}

/* Looks at events until method arrives or the time is up (then false). */
static bool wait_event(const char *method, double seconds) {
    double d = deadline;
    if (now() + seconds < deadline) deadline = now() + seconds;
    json_t *m;
    bool got = false;
    while (!got && (m = next_msg())) {
        const char *mm = json_string_value(json_object_get(m, "method"));
        got = mm && strcmp(mm, method) == 0;
        look_at_event(m);
        json_decref(m);
    }
    deadline = d;
    return got;
}

int main(int argc, char **argv) {
    const char *browser = "chromium", *url = NULL;
    long min_images = 0;
    double timeout = 60;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--browser") && i + 1 < argc)
            browser = argv[++i];
        else if (!strcmp(argv[i], "--min-images") && i + 1 < argc)
            min_images = atol(argv[++i]);
        else if (!strcmp(argv[i], "--timeout") && i + 1 < argc)
            timeout = atof(argv[++i]);
        else if (argv[i][0] != '-' && !url)
            url = argv[i];
        else {
            fprintf(stderr, "usage: pagecheck [--browser PATH] [--min-images N] [--timeout S] "
                            "URL\n");
            return 2;
        }
    }
    if (!url || timeout <= 0) {
        fprintf(stderr, "usage: pagecheck [--browser PATH] [--min-images N] [--timeout S] URL\n");
        return 2;
    }
    char profile[] = "/tmp/pagecheck-XXXXXX";
    if (!mkdtemp(profile)) {
        perror("pagecheck: mkdtemp");
        return 2;
    }
    int in[2], out[2];
    if (pipe(in) || pipe(out)) {
        perror("pagecheck: pipe");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    pid_t pid = fork();
    if (pid < 0) {
        perror("pagecheck: fork");
        return 2;
    }
    if (pid == 0) { /* the browser: commands on fd 3, replies on fd 4 */
        int r = dup(in[0]), w = dup(out[1]);
        if (r < 0 || w < 0 || dup2(r, 3) < 0 || dup2(w, 4) < 0) _exit(127);
        for (int fd = 5; fd < 64; fd++)
            close(fd);
        int null = open("/dev/null", 1); /* the browser's own chatter */
        if (null >= 0) dup2(null, 2), dup2(null, 1);
        char dir[64];
        snprintf(dir, sizeof dir, "--user-data-dir=%s", profile);
        execlp(browser, browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
               "--remote-debugging-pipe", dir, (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    to_fd = in[1];
    from_fd = out[0];
    deadline = now() + timeout;

    send_cmd(1, "Target.createTarget", json_pack("{s:s}", "url", "about:blank"));
    json_t *r = reply(1);
    char *target =
        strdup(json_string_value(json_object_get(json_object_get(r, "result"), "targetId")));
    json_decref(r);
    send_cmd(2, "Target.attachToTarget", json_pack("{s:s, s:b}", "targetId", target, "flatten", 1));
    r = reply(2);
    session = strdup(json_string_value(json_object_get(json_object_get(r, "result"), "sessionId")));
    json_decref(r);
    send_cmd(3, "Runtime.enable", NULL);
    json_decref(reply(3));
    send_cmd(4, "Log.enable", NULL);
    json_decref(reply(4));
    send_cmd(5, "Page.enable", NULL);
    json_decref(reply(5));
    send_cmd(6, "Page.navigate", json_pack("{s:s}", "url", url));
    r = reply(6);
    const char *nav_err =
        json_string_value(json_object_get(json_object_get(r, "result"), "errorText"));
    if (nav_err) {
        printf("navigation failed: %s\n", nav_err);
        n_errors++;
    }
    json_decref(r);
    bool loaded = !nav_err && wait_event("Page.loadEventFired", timeout);
    if (!loaded && !nav_err) {
        printf("the page did not finish loading in %.0f s\n", timeout);
        n_errors++;
    }
    wait_event("pagecheck.none", 0.5); /* late log entries */
    send_cmd(7, "Runtime.evaluate",
             json_pack("{s:s, s:b}", "expression",
                       "Array.from(document.images).map(i => [i.getAttribute('src'), "
                       "i.complete && i.naturalWidth > 0, i.naturalWidth, i.naturalHeight])",
                       "returnByValue", 1));
    r = reply(7);
    json_t *imgs =
        json_object_get(json_object_get(json_object_get(r, "result"), "result"), "value");
    size_t i, n_ok = 0;
    json_t *img;
    json_array_foreach(imgs, i, img) {
        bool ok = json_is_true(json_array_get(img, 1));
        n_ok += ok;
        printf("image %s: %s (%lldx%lld)\n", json_string_value(json_array_get(img, 0)),
               ok ? "loaded" : "MISSING", (long long)json_integer_value(json_array_get(img, 2)),
               (long long)json_integer_value(json_array_get(img, 3)));
    }
    size_t n_img = json_array_size(imgs);
    json_decref(r);
    printf("images: %zu, loaded: %zu; errors: %d\n", n_img, n_ok, n_errors);
    free((char *)session);
    session = NULL;
    send_cmd(8, "Browser.close", NULL);
    close(to_fd);
    deadline = now() + 10;
    for (json_t *m; (m = next_msg());)
        json_decref(m);
    int st;
    if (waitpid(pid, &st, WNOHANG) == 0) {
        sleep(1);
        if (waitpid(pid, &st, WNOHANG) == 0) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
        }
    }
    free(target);
    free(inbuf);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", profile);
    if (system(cmd)) {
    }
    bool whole = n_errors == 0 && n_ok == n_img && (long)n_img >= min_images && loaded;
    if ((long)n_img < min_images) printf("fewer images than %ld\n", min_images);
    return whole ? 0 : 1;
}
