/* Startup code for QEMU's "-machine mps2-an500" (Cortex-M7), written for Tinyscope's device runner.
 *
 * Linked with -nostartfiles and newlib's librdimon (semihosting), so this file replaces crt0:
 * the vector table, Reset_Handler (FPU on, .data copied, .bss zeroed, semihosting handles opened,
 * constructors run, main called, exit), a fault handler that reports through semihosting and exits
 * instead of hanging, and the stack painting used to measure the stack high-water mark.
 * Symbols come from link.ld in this folder.
 */
#include <stdint.h>
#include <stdlib.h>

#include "tinyscope_device.h"

extern uint32_t __data_load__, __data_start__, __data_end__;
extern uint32_t __bss_start__, __bss_end__;
extern uint32_t __stack_top__, __stack_limit__;

extern int main(void);
extern void initialise_monitor_handles(void);
extern void __libc_init_array(void);

void Reset_Handler(void);
void Tinyscope_Fault_Handler(void);

/* newlib's __libc_init_array calls _init; crti.o is not linked (-nostartfiles). */
void _init(void) {}
void _fini(void) {}

#define TINYSCOPE_STACK_PAINT 0xC0FFEE11u
#define SCB_CPACR (*(volatile uint32_t *)0xE000ED88u)
#define SEMIHOSTING_SYS_WRITE0 0x04
#define SEMIHOSTING_SYS_EXIT 0x18
#define ADP_STOPPED_RUN_TIME_ERROR 0x20023

static int semihosting_call(int op, const void *arg)
{
    register int r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

__attribute__((section(".isr_vector"), used)) static void (*const vector_table[16])(void) = {
    (void (*)(void))(&__stack_top__), /* initial SP */
    Reset_Handler,
    Tinyscope_Fault_Handler, /* NMI */
    Tinyscope_Fault_Handler, /* HardFault */
    Tinyscope_Fault_Handler, /* MemManage */
    Tinyscope_Fault_Handler, /* BusFault */
    Tinyscope_Fault_Handler, /* UsageFault */
    0, 0, 0, 0,
    Tinyscope_Fault_Handler, /* SVCall */
    Tinyscope_Fault_Handler, /* DebugMonitor */
    0,
    Tinyscope_Fault_Handler, /* PendSV */
    Tinyscope_Fault_Handler, /* SysTick */
};

void Tinyscope_Fault_Handler(void)
{
    semihosting_call(SEMIHOSTING_SYS_WRITE0, "tinyscope-device: fault exception (HardFault/BusFault/UsageFault/...)\n");
    semihosting_call(SEMIHOSTING_SYS_EXIT, (const void *)ADP_STOPPED_RUN_TIME_ERROR);
    for (;;) {
    }
}

void Reset_Handler(void)
{
    /* Full access to CP10/CP11 (the single-precision FPU) before any float instruction runs. */
    SCB_CPACR |= (0xFu << 20);
    __asm__ volatile("dsb\n\tisb" ::: "memory");

    volatile uint32_t *src = &__data_load__;
    volatile uint32_t *dst = &__data_start__;
    while (dst < &__data_end__) {
        *dst++ = *src++;
    }
    for (volatile uint32_t *p = &__bss_start__; p < &__bss_end__; ++p) {
        *p = 0;
    }

    initialise_monitor_handles();
    __libc_init_array();
    exit(main());
}

void tinyscope_stack_paint(void)
{
    uint32_t sp;
    __asm__ volatile("mov %0, sp" : "=r"(sp));
    /* Leave a margin below the current frame so painting never overwrites live data. */
    volatile uint32_t *limit = (volatile uint32_t *)(sp - 64u);
    for (volatile uint32_t *p = &__stack_limit__; p < limit; ++p) {
        *p = TINYSCOPE_STACK_PAINT;
    }
}

uint32_t tinyscope_stack_high_water(void)
{
    const volatile uint32_t *p = &__stack_limit__;
    const volatile uint32_t *top = &__stack_top__;
    while (p < top && *p == TINYSCOPE_STACK_PAINT) {
        ++p;
    }
    return (uint32_t)((uintptr_t)top - (uintptr_t)p);
}

uint32_t tinyscope_stack_size(void)
{
    return (uint32_t)((uintptr_t)&__stack_top__ - (uintptr_t)&__stack_limit__);
}
