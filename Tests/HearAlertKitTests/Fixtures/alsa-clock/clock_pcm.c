/* A virtual sound card for tests: an ALSA I/O plugin ("type hearalert_clock") whose hardware pointer advances
 * with CLOCK_MONOTONIC, one period at a time, as a card's period interrupts do. Unlike the file and null plugins,
 * which move audio as fast as they are asked, it makes capture wait for the microphone and playback wait for the
 * headphones, so the queues a listener builds up take real time and `snd_pcm_delay` reports them.
 *
 * Capture plays `file` (raw 16-bit mono) as the microphone: the sample heard at time t is the file's sample
 * (t - T0) * rate, T0 being the first start; audio lost in an overrun is skipped, as a microphone goes on.
 * Playback records what reaches the headphones to `file` on the same kind of timeline: sample j was heard at
 * T0 + j / rate (silence where nothing played, e.g. after an underrun). Each device writes its T0 (CLOCK_MONOTONIC
 * nanoseconds, decimal) to `start_file` at its first start, so a test can line the two timelines up and measure
 * microphone-to-ear delay independently of what the program under test says about itself.
 *
 * Built by the tests (`cc -shared -fPIC clock_pcm.c -lasound`) and loaded through `pcm_type.hearalert_clock.lib`;
 * it is not part of HearAlert. An underrun or overrun is reported as a real card reports it: the pointer
 * callback returns -EPIPE once the hardware pointer reaches the application pointer (playback) or gets a buffer
 * ahead of it (capture). */
#include <alsa/asoundlib.h>
#include <alsa/pcm_external.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    snd_pcm_ioplug_t io;
    int timer;            /* timerfd, readable once per period while running */
    FILE *output;         /* playback: the timeline of what was heard */
    char *start_path;     /* where T0 goes */
    int16_t *input;       /* capture: the whole microphone timeline */
    size_t input_frames;
    int16_t *queued;      /* playback: a copy of the device buffer, indexed by absolute position mod its size */
    int64_t first_start;  /* T0 in ns, 0 before the first start */
    int64_t start;        /* this run's start in ns */
    int64_t base;         /* timeline frame of this run's position 0 */
    uint64_t played;      /* playback: frames of this run already written to the timeline */
    uint64_t timeline;    /* playback: frames written to the timeline file so far */
    int running;
} clock_pcm;

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Frames the hardware has moved in this run: whole periods elapsed since the start. */
static uint64_t hardware_frames(const clock_pcm *pcm) {
    if (!pcm->running) return 0;
    uint64_t frames = (uint64_t)((now_ns() - pcm->start) * (int64_t)pcm->io.rate / 1000000000);
    return frames / pcm->io.period_size * pcm->io.period_size;
}

static void write_silence(clock_pcm *pcm, uint64_t until) {
    static const int16_t zero[256];
    while (pcm->timeline < until) {
        size_t count = until - pcm->timeline < 256 ? (size_t)(until - pcm->timeline) : 256;
        fwrite(zero, sizeof zero[0], count, pcm->output);
        pcm->timeline += count;
    }
}

/* Playback: writes the frames heard up to run position `upto` (never beyond what the application queued). */
static void play_until(clock_pcm *pcm, uint64_t upto) {
    uint64_t queued = pcm->io.appl_ptr;
    if (upto > queued) upto = queued;
    while (pcm->played < upto) {
        fwrite(&pcm->queued[pcm->played % pcm->io.buffer_size], sizeof(int16_t), 1, pcm->output);
        pcm->played++;
        pcm->timeline++;
    }
}

static int clock_start(snd_pcm_ioplug_t *io) {
    clock_pcm *pcm = io->private_data;
    pcm->start = now_ns();
    if (!pcm->first_start) {
        pcm->first_start = pcm->start;
        FILE *file = fopen(pcm->start_path, "w");
        if (!file) return -errno;
        fprintf(file, "%lld\n", (long long)pcm->start);
        fclose(file);
    }
    pcm->base = (pcm->start - pcm->first_start) * (int64_t)io->rate / 1000000000;
    pcm->played = 0;
    if (io->stream == SND_PCM_STREAM_PLAYBACK) write_silence(pcm, (uint64_t)pcm->base);
    pcm->running = 1;
    int64_t period = (int64_t)io->period_size * 1000000000 / io->rate;
    struct itimerspec spec = {{period / 1000000000, period % 1000000000}, {period / 1000000000, period % 1000000000}};
    return timerfd_settime(pcm->timer, 0, &spec, NULL) < 0 ? -errno : 0;
}

static int clock_stop(snd_pcm_ioplug_t *io) {
    clock_pcm *pcm = io->private_data;
    if (pcm->running && io->stream == SND_PCM_STREAM_PLAYBACK) play_until(pcm, hardware_frames(pcm));
    pcm->running = 0;
    struct itimerspec off = {{0, 0}, {0, 0}};
    timerfd_settime(pcm->timer, 0, &off, NULL);
    return 0;
}

static snd_pcm_sframes_t clock_pointer(snd_pcm_ioplug_t *io) {
    clock_pcm *pcm = io->private_data;
    uint64_t hardware = hardware_frames(pcm);
    uint64_t application = io->appl_ptr;
    if (io->stream == SND_PCM_STREAM_PLAYBACK) {
        if (pcm->running && hardware >= application) {
            play_until(pcm, application);
            pcm->running = 0;
            return -EPIPE;
        }
        play_until(pcm, hardware);
    } else if (pcm->running && hardware >= application + io->buffer_size) {
        pcm->running = 0;
        return -EPIPE;
    }
    return (snd_pcm_sframes_t)(hardware % io->buffer_size);
}

static snd_pcm_sframes_t clock_transfer(snd_pcm_ioplug_t *io, const snd_pcm_channel_area_t *areas,
                                        snd_pcm_uframes_t offset, snd_pcm_uframes_t size) {
    clock_pcm *pcm = io->private_data;
    int16_t *buffer = (int16_t *)((char *)areas->addr + (areas->first + areas->step * offset) / 8);
    uint64_t position = io->appl_ptr;
    for (snd_pcm_uframes_t i = 0; i < size; i++) {
        if (io->stream == SND_PCM_STREAM_PLAYBACK) {
            pcm->queued[(position + i) % io->buffer_size] = buffer[i];
        } else {
            uint64_t frame = (uint64_t)pcm->base + position + i;
            buffer[i] = frame < pcm->input_frames ? pcm->input[frame] : 0;
        }
    }
    return (snd_pcm_sframes_t)size;
}

static int clock_hw_params(snd_pcm_ioplug_t *io, snd_pcm_hw_params_t *params) {
    (void)params;
    clock_pcm *pcm = io->private_data;
    free(pcm->queued);
    pcm->queued = calloc(io->buffer_size, sizeof(int16_t));
    return pcm->queued ? 0 : -ENOMEM;
}

static int clock_prepare(snd_pcm_ioplug_t *io) {
    clock_pcm *pcm = io->private_data;
    if (pcm->running) clock_stop(io);
    return 0;
}

static int clock_poll_revents(snd_pcm_ioplug_t *io, struct pollfd *fds, unsigned int count, unsigned short *revents) {
    clock_pcm *pcm = io->private_data;
    (void)count;
    uint64_t expirations;
    if (fds[0].revents & POLLIN) (void)!read(pcm->timer, &expirations, sizeof expirations);
    uint64_t hardware = hardware_frames(pcm), application = io->appl_ptr;
    uint64_t avail = io->stream == SND_PCM_STREAM_PLAYBACK ? io->buffer_size - (application - hardware)
                                                           : hardware - application;
    *revents = avail >= io->period_size ? (io->stream == SND_PCM_STREAM_PLAYBACK ? POLLOUT : POLLIN) : 0;
    return 0;
}

static int clock_close(snd_pcm_ioplug_t *io) {
    clock_pcm *pcm = io->private_data;
    if (pcm->output) fclose(pcm->output);
    close(pcm->timer);
    free(pcm->queued);
    free(pcm->input);
    free(pcm->start_path);
    free(pcm);
    return 0;
}

static const snd_pcm_ioplug_callback_t callbacks = {
    .start = clock_start,
    .stop = clock_stop,
    .pointer = clock_pointer,
    .transfer = clock_transfer,
    .close = clock_close,
    .hw_params = clock_hw_params,
    .prepare = clock_prepare,
    .poll_revents = clock_poll_revents,
};

static int load_input(clock_pcm *pcm, const char *path) {
    FILE *file = fopen(path, "rb");
    if (!file) return -errno;
    fseek(file, 0, SEEK_END);
    long bytes = ftell(file);
    fseek(file, 0, SEEK_SET);
    pcm->input_frames = bytes > 0 ? (size_t)bytes / 2 : 0;
    pcm->input = malloc(pcm->input_frames * 2 + 2);
    size_t read = pcm->input ? fread(pcm->input, 2, pcm->input_frames, file) : 0;
    fclose(file);
    if (!pcm->input || read != pcm->input_frames) return -EIO;
    return 0;
}

SND_PCM_PLUGIN_DEFINE_FUNC(hearalert_clock) {
    (void)root;
    const char *path = NULL, *start_path = NULL;
    snd_config_iterator_t i, next;
    snd_config_for_each(i, next, conf) {
        snd_config_t *entry = snd_config_iterator_entry(i);
        const char *id;
        if (snd_config_get_id(entry, &id) < 0) continue;
        if (!strcmp(id, "comment") || !strcmp(id, "type") || !strcmp(id, "hint")) continue;
        if (!strcmp(id, "file") && snd_config_get_string(entry, &path) >= 0) continue;
        if (!strcmp(id, "start_file") && snd_config_get_string(entry, &start_path) >= 0) continue;
        SNDERR("hearalert_clock: unknown field %s", id);
        return -EINVAL;
    }
    if (!path || !start_path) {
        SNDERR("hearalert_clock: needs file and start_file");
        return -EINVAL;
    }
    clock_pcm *pcm = calloc(1, sizeof *pcm);
    if (!pcm) return -ENOMEM;
    pcm->timer = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    pcm->start_path = strdup(start_path);
    int err = pcm->timer < 0 || !pcm->start_path ? -ENOMEM : 0;
    if (!err && stream == SND_PCM_STREAM_PLAYBACK) {
        pcm->output = fopen(path, "wb");
        if (!pcm->output) err = -errno;
    } else if (!err) {
        err = load_input(pcm, path);
    }
    if (err) {
        if (pcm->timer >= 0) close(pcm->timer);
        free(pcm->start_path);
        free(pcm->input);
        free(pcm);
        return err;
    }
    pcm->io.version = SND_PCM_IOPLUG_VERSION;
    pcm->io.name = "HearAlert test clock";
    pcm->io.callback = &callbacks;
    pcm->io.private_data = pcm;
    pcm->io.poll_fd = pcm->timer;
    pcm->io.poll_events = POLLIN;
    pcm->io.flags = SND_PCM_IOPLUG_FLAG_MONOTONIC;
    err = snd_pcm_ioplug_create(&pcm->io, name, stream, mode);
    if (err < 0) {
        close(pcm->timer);
        free(pcm->start_path);
        free(pcm->input);
        if (pcm->output) fclose(pcm->output);
        free(pcm);
        return err;
    }
    static const unsigned int access[] = {SND_PCM_ACCESS_RW_INTERLEAVED};
    static const unsigned int format[] = {SND_PCM_FORMAT_S16_LE};
    if ((err = snd_pcm_ioplug_set_param_list(&pcm->io, SND_PCM_IOPLUG_HW_ACCESS, 1, access)) < 0 ||
        (err = snd_pcm_ioplug_set_param_list(&pcm->io, SND_PCM_IOPLUG_HW_FORMAT, 1, format)) < 0 ||
        (err = snd_pcm_ioplug_set_param_minmax(&pcm->io, SND_PCM_IOPLUG_HW_CHANNELS, 1, 1)) < 0 ||
        (err = snd_pcm_ioplug_set_param_minmax(&pcm->io, SND_PCM_IOPLUG_HW_RATE, 8000, 48000)) < 0 ||
        (err = snd_pcm_ioplug_set_param_minmax(&pcm->io, SND_PCM_IOPLUG_HW_PERIOD_BYTES, 16, 65536)) < 0 ||
        (err = snd_pcm_ioplug_set_param_minmax(&pcm->io, SND_PCM_IOPLUG_HW_PERIODS, 2, 64)) < 0) {
        snd_pcm_ioplug_delete(&pcm->io);
        return err;
    }
    *pcmp = pcm->io.pcm;
    return 0;
}

SND_PCM_PLUGIN_SYMBOL(hearalert_clock);
