/*
 * fuzz_ipc_msg.c — libFuzzer target for the record decoder (msg.c), the code
 * that reads untrusted bytes from every socket.  Properties checked on every
 * input: decoding never crashes, leaks or reads out of bounds (ASan), and
 * any record that decodes re-encodes to a record that decodes to the same
 * message and encodes to the same bytes again (encode∘decode is stable).
 * The STATUS body of an accepted record is also unpacked with msgpack-c, which
 * must succeed within bounded memory because the pre-check vetted it.
 *
 * Build: clang-14 -fsanitize=fuzzer,address,undefined (tests/ipc/CMakeLists.txt);
 * ctest runs it for ~20 s from the committed corpus in tests/ipc/corpus/.
 */
#include <msgpack.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/msg.h"

static uint8_t out1[CZK_MSG_MAX_RECORD], out2[CZK_MSG_MAX_RECORD];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    czk_msg m, m2;
    czk_error e;
    int n1, n2;

    if (czk_msg_decode(data, size, &m, &e) != 0) {
        if (!e.msg[0])
            abort(); /* every rejection must say why */
        return 0;
    }
    n1 = czk_msg_encode(out1, sizeof(out1), &m, &e);
    if (n1 <= 0)
        abort(); /* whatever the decoder accepts, the encoder can write */
    if (czk_msg_decode(out1, (size_t)n1, &m2, &e) != 0)
        abort();
    n2 = czk_msg_encode(out2, sizeof(out2), &m2, &e);
    if (n2 != n1 || memcmp(out1, out2, (size_t)n1))
        abort();
    if ((m.type == CZK_MSG_STATUS || m.type == CZK_MSG_STATUS_REPLY) && m.u.status.body.len) {
        msgpack_unpacked up;
        size_t off = 0;
        msgpack_unpacked_init(&up);
        if (msgpack_unpack_next(&up, (const char *)m.u.status.body.ptr, m.u.status.body.len, &off) !=
                MSGPACK_UNPACK_SUCCESS ||
            up.data.type != MSGPACK_OBJECT_MAP || off != m.u.status.body.len)
            abort();
        msgpack_unpacked_destroy(&up);
    }
    return 0;
}
