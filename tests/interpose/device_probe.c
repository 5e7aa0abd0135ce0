/* For test_interpose_f: whether this process sees a GPU, asked of the
 * preloaded library (weak: the program does not link Chorus). */
extern int chorus_interpose_local_device(void) __attribute__((weak));

int test_interpose_device(void) { return chorus_interpose_local_device ? chorus_interpose_local_device() : 0; }
