/* A QEMU TCG plugin (QEMU plugin API version 1, as in Debian 12's QEMU 7.2) that counts executed guest
 * instructions and records the running count each time the guest enters one marker function.
 * Written for Tinyscope's device runner: the harness calls tinyscope_mark() before and after each
 * inference and training step, so the difference of two consecutive records is the instruction
 * count of that call (exact to the translation block: the count is added when a block is entered).
 *
 * Arguments:  mark=<hex address of tinyscope_mark>  out=<file the records are written to at exit>
 * Build:      gcc -shared -fPIC -O2 -o libinsn_marks.so insn_marks.c
 * Use:        qemu-system-arm ... -plugin ./libinsn_marks.so,mark=0x1234,out=insns.txt
 *
 * Only the handful of declarations this plugin needs are written out here, matching QEMU's plugin ABI
 * (Debian ships qemu-system-arm with plugin support but without the header).
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t qemu_info_t;
struct qemu_plugin_tb;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_CB_R_REGS, QEMU_PLUGIN_CB_RW_REGS };

typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op, void *ptr,
                                              uint64_t imm);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb, qemu_plugin_vcpu_udata_cb_t cb,
                                          enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

static uint64_t insn_count;
static uint64_t mark_address;
static char out_path[4096];
static uint64_t *records;
static size_t record_count, record_capacity;

static void on_mark(unsigned int vcpu_index, void *userdata)
{
    (void)vcpu_index;
    (void)userdata;
    if (record_count == record_capacity) {
        record_capacity = record_capacity ? record_capacity * 2 : 64;
        records = realloc(records, record_capacity * sizeof *records);
        if (!records) {
            abort();
        }
    }
    records[record_count++] = insn_count;
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &insn_count,
                                             qemu_plugin_tb_n_insns(tb));
    if (mark_address != 0 && (qemu_plugin_tb_vaddr(tb) & ~(uint64_t)1) == (mark_address & ~(uint64_t)1)) {
        qemu_plugin_register_vcpu_tb_exec_cb(tb, on_mark, QEMU_PLUGIN_CB_NO_REGS, NULL);
    }
}

static void on_plugin_exit(qemu_plugin_id_t id, void *userdata)
{
    (void)id;
    (void)userdata;
    FILE *f = out_path[0] ? fopen(out_path, "w") : stderr;
    if (!f) {
        return;
    }
    fprintf(f, "total %" PRIu64 "\n", insn_count);
    for (size_t i = 0; i < record_count; ++i) {
        fprintf(f, "mark %zu %" PRIu64 "\n", i, records[i]);
    }
    if (f != stderr) {
        fclose(f);
    }
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
                                                              int argc, char **argv)
{
    (void)info;
    for (int i = 0; i < argc; ++i) {
        if (strncmp(argv[i], "mark=", 5) == 0) {
            mark_address = strtoull(argv[i] + 5, NULL, 16);
        } else if (strncmp(argv[i], "out=", 4) == 0) {
            snprintf(out_path, sizeof out_path, "%s", argv[i] + 4);
        } else {
            fprintf(stderr, "insn_marks: unknown argument '%s' (expected mark=0xADDR, out=PATH)\n", argv[i]);
            return -1;
        }
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
    qemu_plugin_register_atexit_cb(id, on_plugin_exit, NULL);
    return 0;
}
