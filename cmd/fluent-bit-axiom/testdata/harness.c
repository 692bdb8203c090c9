/*
 * harness: loads out_axiom.so with dlopen and drives it the way Fluent Bit's
 * Go proxy (src/proxy/go/go.c) does, so the plugin is tested without a
 * Fluent Bit binary. Written from fluent-bit-go's headers (flb_plugin.h,
 * flb_output.h: the registration struct, the per-instance struct with the
 * property callback and the proxy context) and Fluent Bit's documentation
 * of Go plugins (register once; init per [OUTPUT]; flush with the instance's
 * context, the msgpack chunk, its size and a NUL-terminated tag; exit).
 *
 * usage: harness <plugin.so>, commands on stdin, one per line:
 *   init NAME key=value...      FLBPluginInit for a new instance NAME
 *   flush NAME TAG FILE         FLBPluginFlushCtx with FILE's bytes as the chunk
 *   repeat NAME TAG FILE N      N flushes of FILE; prints CPU seconds used
 *   parallel TAG NAME FILE ...  one thread per NAME FILE pair, flushing at once
 *   exit NAME                   FLBPluginExitCtx for NAME
 *   exitall                     FLBPluginExit
 * Each command prints one result line on stdout.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>

#include "flb_plugin.h"
#include "flb_output.h"

/* Fluent Bit's output instance is opaque to the plugin: the proxy passes
 * it back to output_get_property. Here it is a property list. */
#define MAX_PROPS 16
#define MAX_INSTANCES 16
struct flb_output_instance {
    int n;
    char *keys[MAX_PROPS];
    char *values[MAX_PROPS];
};

struct harness_instance {
    char *name;
    struct flb_output_instance ins;
    struct flb_plugin_proxy_context ctx;
    struct flb_api api;
    struct flbgo_output_plugin plugin;
};

typedef int (*register_fn)(void *);
typedef int (*init_fn)(void *);
typedef int (*flush_ctx_fn)(void *, const void *, int, char *);
typedef int (*exit_ctx_fn)(void *);
typedef int (*exit_fn)(void);

static register_fn cb_register;
static init_fn cb_init;
static flush_ctx_fn cb_flush_ctx;
static exit_ctx_fn cb_exit_ctx;
static exit_fn cb_exit;
static struct harness_instance instances[MAX_INSTANCES];
static int n_instances;

/* Fluent Bit matches property names case-insensitively; an unset one is NULL. */
static char *get_property(char *key, void *o_ins)
{
    struct flb_output_instance *ins = o_ins;
    for (int i = 0; i < ins->n; i++) {
        if (strcasecmp(ins->keys[i], key) == 0) {
            return ins->values[i];
        }
    }
    return NULL;
}

static struct harness_instance *find(const char *name)
{
    for (int i = 0; i < n_instances; i++) {
        if (strcmp(instances[i].name, name) == 0) {
            return &instances[i];
        }
    }
    fprintf(stderr, "harness: no instance %s\n", name);
    exit(2);
}

static char *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(2);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc(n > 0 ? n : 1);
    if (fread(buf, 1, n, f) != (size_t) n) {
        perror(path);
        exit(2);
    }
    fclose(f);
    *size = n;
    return buf;
}

/* The proxy hands the tag as a fresh NUL-terminated copy for each flush. */
static int flush(struct harness_instance *h, const char *tag, const char *data, size_t size)
{
    char *t = strdup(tag);
    int ret = cb_flush_ctx(h->ctx.remote_context, data, (int) size, t);
    free(t);
    return ret;
}

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

struct job {
    struct harness_instance *h;
    const char *tag;
    char *data;
    size_t size;
    int ret;
};

static void *run_job(void *arg)
{
    struct job *j = arg;
    j->ret = flush(j->h, j->tag, j->data, j->size);
    return NULL;
}

static void cmd_init(char *name, char *save)
{
    if (n_instances == MAX_INSTANCES) {
        fprintf(stderr, "harness: too many instances\n");
        exit(2);
    }
    struct harness_instance *h = &instances[n_instances++];
    h->name = strdup(name);
    for (char *kv; (kv = strtok_r(NULL, " \t\n", &save)) && h->ins.n < MAX_PROPS;) {
        char *eq = strchr(kv, '=');
        if (!eq) {
            continue;
        }
        *eq = '\0';
        h->ins.keys[h->ins.n] = strdup(kv);
        h->ins.values[h->ins.n] = strdup(eq + 1);
        h->ins.n++;
    }
    /* As proxy_go_output_init: the API, the instance, the proxy context. */
    h->api.output_get_property = get_property;
    h->plugin.api = &h->api;
    h->plugin.o_ins = &h->ins;
    h->plugin.context = &h->ctx;
    printf("init %s %d\n", name, cb_init(&h->plugin));
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: harness plugin.so < commands\n");
        return 2;
    }
    void *so = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!so) {
        fprintf(stderr, "harness: %s\n", dlerror());
        return 2;
    }
    cb_register = (register_fn) dlsym(so, "FLBPluginRegister");
    cb_init = (init_fn) dlsym(so, "FLBPluginInit");
    cb_flush_ctx = (flush_ctx_fn) dlsym(so, "FLBPluginFlushCtx");
    cb_exit_ctx = (exit_ctx_fn) dlsym(so, "FLBPluginExitCtx");
    cb_exit = (exit_fn) dlsym(so, "FLBPluginExit");
    if (!cb_register || !cb_init || !cb_flush_ctx || !cb_exit_ctx || !cb_exit) {
        fprintf(stderr, "harness: a plugin entry point is missing\n");
        return 2;
    }

    struct flb_plugin_proxy_def def = {0};
    int ret = cb_register(&def);
    printf("register %d %s %d %d\n", ret, def.name ? def.name : "", def.type, def.proxy);
    fflush(stdout);

    char line[4096];
    while (fgets(line, sizeof(line), stdin)) {
        char *save = NULL;
        char *cmd = strtok_r(line, " \t\n", &save);
        if (!cmd) {
            continue;
        }
        if (strcmp(cmd, "init") == 0) {
            char *name = strtok_r(NULL, " \t\n", &save);
            cmd_init(name, save);
        }
        else if (strcmp(cmd, "flush") == 0) {
            char *name = strtok_r(NULL, " \t\n", &save);
            char *tag = strtok_r(NULL, " \t\n", &save);
            size_t size;
            char *data = read_file(strtok_r(NULL, " \t\n", &save), &size);
            printf("flush %s %d\n", name, flush(find(name), tag, data, size));
            free(data);
        }
        else if (strcmp(cmd, "repeat") == 0) {
            char *name = strtok_r(NULL, " \t\n", &save);
            char *tag = strtok_r(NULL, " \t\n", &save);
            size_t size;
            char *data = read_file(strtok_r(NULL, " \t\n", &save), &size);
            int n = atoi(strtok_r(NULL, " \t\n", &save));
            int counts[3] = {0, 0, 0};
            struct harness_instance *h = find(name);
            double start = cpu_seconds();
            for (int i = 0; i < n; i++) {
                int r = flush(h, tag, data, size);
                if (r >= 0 && r <= 2) {
                    counts[r]++;
                }
            }
            printf("repeat %s ok=%d retry=%d error=%d cpu=%.6f\n", name,
                   counts[FLB_OK], counts[FLB_RETRY], counts[FLB_ERROR], cpu_seconds() - start);
            free(data);
        }
        else if (strcmp(cmd, "parallel") == 0) {
            char *tag = strtok_r(NULL, " \t\n", &save);
            struct job jobs[MAX_INSTANCES];
            pthread_t threads[MAX_INSTANCES];
            int n = 0;
            for (char *name; n < MAX_INSTANCES && (name = strtok_r(NULL, " \t\n", &save)); n++) {
                jobs[n].h = find(name);
                jobs[n].tag = tag;
                jobs[n].data = read_file(strtok_r(NULL, " \t\n", &save), &jobs[n].size);
            }
            for (int i = 0; i < n; i++) {
                pthread_create(&threads[i], NULL, run_job, &jobs[i]);
            }
            printf("parallel");
            for (int i = 0; i < n; i++) {
                pthread_join(threads[i], NULL);
                printf(" %s=%d", jobs[i].h->name, jobs[i].ret);
                free(jobs[i].data);
            }
            printf("\n");
        }
        else if (strcmp(cmd, "exit") == 0) {
            char *name = strtok_r(NULL, " \t\n", &save);
            printf("exit %s %d\n", name, cb_exit_ctx(find(name)->ctx.remote_context));
        }
        else if (strcmp(cmd, "exitall") == 0) {
            printf("exitall %d\n", cb_exit());
        }
        else {
            fprintf(stderr, "harness: unknown command %s\n", cmd);
            return 2;
        }
        fflush(stdout);
    }
    return 0;
}
