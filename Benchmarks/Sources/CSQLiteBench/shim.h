#include <sqlite3.h>

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
/// Switches callgrind's collection on or off for the calling thread (nothing outside valgrind): the
/// probes count exactly the code between two calls, whatever the compiler inlines or merges.
static inline void probe_toggle_collect(void) { CALLGRIND_TOGGLE_COLLECT; }
#else
static inline void probe_toggle_collect(void) {}
#endif
