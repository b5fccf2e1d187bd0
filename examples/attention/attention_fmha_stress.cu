// attention_prompt_stress's own copy of the FMHA stage's launch functions, with random delays before each attention
// block's wait and post (stress_delay.cuh) and the wait watchdog; CUSYNC_FMHA_BUILD_NAMESPACE keeps them apart from
// the library's undelayed ones.
#define CUSYNC_CHAIN_DELAY_NS 20000
#define CUSYNC_WAIT_TIMEOUT_NS 5000000000ull
#include "attention_fmha.cu"
