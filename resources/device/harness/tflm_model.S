/* The .tflite model as read-only data, for tflm_main.cc: the runner copies the file to model.tflite in
 * the build folder and assembles this file there, so .incbin finds it. 16-byte aligned, as TFLM wants
 * its flatbuffer. link.ld places section .tinyscope_model in the board's 16 MB PSRAM (MODEL), standing
 * in for flash; the runner counts it as flash. */
    .section .tinyscope_model, "a"
    .balign 16
    .global tinyscope_model
tinyscope_model:
    .incbin "model.tflite"
tinyscope_model_end:
    .balign 4
    .global tinyscope_model_bytes
tinyscope_model_bytes:
    .word tinyscope_model_end - tinyscope_model
