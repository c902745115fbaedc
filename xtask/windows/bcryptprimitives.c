/* A stand-in for Windows' bcryptprimitives.dll, which Wine 8.0 lacks and
 * every Rust 1.78+ program imports (std takes its random numbers from
 * ProcessPrng). It forwards to RtlGenRandom (advapi32's SystemFunction036).
 * Built by `cargo xtask test` into the Wine prefix the Windows tests run in;
 * never shipped. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG chunk = length > 0x40000000 ? 0x40000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
