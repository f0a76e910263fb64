# tabletrack - build, test, install.
#
#   make                 build the daemon, tools and tests into build/
#   make run             install missing packages, build, run on camera or demo
#   make test            install missing packages, build, run every test
#   make SAN=address,undefined test    the same under sanitizers (also SAN=thread)
#   make CUDA=0|1|auto   build the GPU stage never / always / when nvcc exists
#   make install PREFIX=/usr/local DESTDIR=
#   make fuzz            build the libFuzzer targets (clang)
#   make format          clang-format every source file
#
# Every room's .c files are picked up by wildcard: a new file needs no edit here.

CC       ?= gcc
CXX      ?= g++
NVCC     ?= $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
BUILD    := build
PREFIX   ?= /usr/local
DESTDIR  ?=
SAN      ?=
CUDA     ?= auto
VERSION  := 0.1.0

PKGS     := liblo libpng zlib inih libsystemd libv4l2 libturbojpeg sdl2
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

WARN     := -Wall -Wextra -Wshadow -Wmissing-prototypes -Werror
CFLAGS   ?= -O2 -g
CFLAGS   += -std=c11 $(WARN) -D_GNU_SOURCE -DTT_VERSION=\"$(VERSION)\" -MMD -MP $(PKG_CFLAGS)
LDLIBS   += $(PKG_LIBS) -lpthread -lm

ifneq ($(SAN),)
CFLAGS   += -fsanitize=$(SAN) -fno-omit-frame-pointer -O1
LDFLAGS  += -fsanitize=$(SAN)
endif

# --- CUDA seam: cuda/*.cu when nvcc is there (CUDA=auto) or demanded (CUDA=1),
# else cuda/none.c, which reports the GPU path as not built.
# The runtime library's folder comes from nvcc itself: the nvcc on PATH may be
# a wrapper script outside the toolkit (CI has /usr/local/bin/nvcc), so its
# own path says nothing about where libcudart_static.a lives.
ifneq ($(NVCC),)
  CUDA_LIBDIR ?= $(shell sh tests/gpu/cuda_libdir.sh $(NVCC))
endif
ifeq ($(CUDA),auto)
  ifneq ($(wildcard $(CUDA_LIBDIR)/libcudart_static.a),)
    CUDA := 1
  else
    ifneq ($(NVCC),)
      $(info nvcc found but not libcudart_static.a; building without the GPU stage)
    endif
    CUDA := 0
  endif
endif
CUDA_ARCH ?= -gencode arch=compute_75,code=sm_75 -gencode arch=compute_80,code=sm_80 \
             -gencode arch=compute_86,code=sm_86 -gencode arch=compute_89,code=sm_89 \
             -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90
ifeq ($(CUDA),1)
  CUDA_SRC  := $(wildcard cuda/*.cu)
  CUDA_OBJ  := $(CUDA_SRC:%.cu=$(BUILD)/obj/%.o)
  LDLIBS    += -L$(CUDA_LIBDIR) -lcudart_static -ldl -lrt
  CFLAGS    += -DTT_HAVE_CUDA=1
else
  CUDA_OBJ  := $(BUILD)/obj/cuda/none.o
endif

LIB_SRC  := $(wildcard src/*/*.c)
GEN_SRC  := $(BUILD)/gen/default_trees.c
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/obj/%.o) $(CUDA_OBJ) $(BUILD)/obj/gen/default_trees.o
LIB      := $(BUILD)/libtabletrack.a

TOOL_COMMON := $(wildcard tools/common/*.c)
TOOL_SRC := $(wildcard tools/*.c)
TOOLS    := $(TOOL_SRC:tools/%.c=$(BUILD)/tabletrack-%)

TEST_SRC := $(wildcard tests/test_*.c)
TESTS    := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
TEST_CXX := $(wildcard tests/*.cpp)
TEST_CXX_BIN := $(TEST_CXX:tests/%.cpp=$(BUILD)/tests/%)

all: $(BUILD)/tabletrack $(TOOLS) $(TESTS) $(TEST_CXX_BIN)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/obj/cuda/%.o: cuda/%.cu cuda/*.h
	@mkdir -p $(dir $@)
	$(NVCC) -O3 -std=c++17 $(CUDA_ARCH) -Xcompiler -Wall,-Wextra -Werror all-warnings -DTT_HAVE_CUDA=1 -c $< -o $@

# The default symbol set is compiled into the daemon so it runs from anywhere.
$(GEN_SRC): $(wildcard fiducials/tabletrack.trees)
	@mkdir -p $(dir $@)
	@{ echo '/* Generated from fiducials/tabletrack.trees by the Makefile. */'; \
	   echo 'const char tree_set_builtin_text[] ='; \
	   if [ -f fiducials/tabletrack.trees ]; then sed 's/[^wb0-9 ]//g; s/.*/"&\\n"/' fiducials/tabletrack.trees; fi; \
	   echo '"";'; } > $@

$(BUILD)/obj/gen/default_trees.o: $(GEN_SRC)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Wno-missing-variable-declarations -include src/fiducial/trees.h -c $< -o $@

$(LIB): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/tabletrack: $(BUILD)/obj/src/main.o $(LIB)
	$(CC) $(LDFLAGS) $^ -o $@ $(LDLIBS) $(if $(filter 1,$(CUDA)),-lstdc++)

$(BUILD)/tabletrack-%: $(BUILD)/obj/tools/%.o $(TOOL_COMMON:%.c=$(BUILD)/obj/%.o) $(LIB)
	$(CC) $(LDFLAGS) $^ -o $@ $(LDLIBS) $(if $(filter 1,$(CUDA)),-lstdc++)

$(BUILD)/tests/test_%: $(BUILD)/obj/tests/test_%.o $(BUILD)/obj/tests/common/testutil.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(LDLIBS) -lcmocka $(if $(filter 1,$(CUDA)),-lstdc++)

# Independent TUIO decoder for end-to-end tests, built on Debian's oscpack.
$(BUILD)/tests/%: tests/%.cpp
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 -O1 -g -Wall -Wextra -Werror $(if $(SAN),-fsanitize=$(SAN)) -I/usr/include/oscpack $< -o $@ -loscpack

deps:
	@sh tools/deps.sh

run: deps
	@$(MAKE) --no-print-directory $(BUILD)/tabletrack
	$(BUILD)/tabletrack --headless

test: deps
	@$(MAKE) --no-print-directory all
	@sh tests/run.sh $(BUILD)

fuzz:
	@$(MAKE) --no-print-directory -C tests/fuzz BUILD=$(abspath $(BUILD))/fuzz

# Installs the daemon and tools, the unit files (ExecStart pointed at
# $(PREFIX)/bin), every symbol set (subfolders kept), a man page made from
# --help, and the docs. An existing /etc/tabletrack/tabletrack.conf is kept:
# the new default goes next to it as tabletrack.conf.default (and always to
# $(PREFIX)/share/tabletrack/tabletrack.conf).
UNITDIR  ?= $(PREFIX)/lib/systemd/system
install: $(BUILD)/tabletrack $(TOOLS) $(BUILD)/tabletrack.1
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)/etc/tabletrack $(DESTDIR)$(PREFIX)/share/tabletrack/fiducials \
		$(DESTDIR)$(UNITDIR) $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/doc/tabletrack
	install -m 755 $(BUILD)/tabletrack $(TOOLS) $(DESTDIR)$(PREFIX)/bin/
	install -m 644 config/tabletrack.conf $(DESTDIR)$(PREFIX)/share/tabletrack/tabletrack.conf
	install -m 644 config/calibration-sheet*.svg $(DESTDIR)$(PREFIX)/share/tabletrack/
	@if [ -e $(DESTDIR)/etc/tabletrack/tabletrack.conf ]; then \
		echo "install: keeping $(DESTDIR)/etc/tabletrack/tabletrack.conf; the new default is tabletrack.conf.default"; \
		install -m 644 config/tabletrack.conf $(DESTDIR)/etc/tabletrack/tabletrack.conf.default; \
	else \
		echo "install -m 644 config/tabletrack.conf $(DESTDIR)/etc/tabletrack/tabletrack.conf"; \
		install -m 644 config/tabletrack.conf $(DESTDIR)/etc/tabletrack/tabletrack.conf; \
	fi
	find fiducials -type f | while read -r f; do \
		install -D -m 644 "$$f" "$(DESTDIR)$(PREFIX)/share/tabletrack/$$f" || exit 1; done
	for u in tabletrack.service tabletrack@.service; do \
		sed 's|/usr/local/bin/tabletrack|$(PREFIX)/bin/tabletrack|g' config/$$u >$(DESTDIR)$(UNITDIR)/$$u && \
		chmod 644 $(DESTDIR)$(UNITDIR)/$$u || exit 1; done
	install -m 644 $(BUILD)/tabletrack.1 $(DESTDIR)$(PREFIX)/share/man/man1/tabletrack.1
	install -m 644 $(wildcard README.md docs/*.md) $(DESTDIR)$(PREFIX)/share/doc/tabletrack/

# Everything install put down except the files in /etc/tabletrack.
uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/tabletrack $(TOOLS:$(BUILD)/%=$(DESTDIR)$(PREFIX)/bin/%) \
		$(DESTDIR)$(UNITDIR)/tabletrack.service $(DESTDIR)$(UNITDIR)/tabletrack@.service \
		$(DESTDIR)$(PREFIX)/share/man/man1/tabletrack.1
	rm -rf $(DESTDIR)$(PREFIX)/share/tabletrack $(DESTDIR)$(PREFIX)/share/doc/tabletrack

# A man page from --help (no help2man needed): the option text as is.
$(BUILD)/tabletrack.1: $(BUILD)/tabletrack
	{ printf '.TH TABLETRACK 1 "" "tabletrack $(VERSION)" "User Commands"\n.SH NAME\ntabletrack \\- camera tracking daemon for tabletop interfaces (TUIO)\n'; \
	  printf '.SH SYNOPSIS\n.B tabletrack\n[\\fIOPTION\\fR]...\n.SH DESCRIPTION\n.nf\n'; \
	  $(BUILD)/tabletrack --help | sed -e 's/\\/\\e/g' -e "s/^[.']/\\\\\&&/"; \
	  printf '.fi\n.SH FILES\n/etc/tabletrack/tabletrack.conf, $(UNITDIR)/tabletrack.service, tabletrack@.service\n'; \
	  printf '.SH SEE ALSO\n$(PREFIX)/share/doc/tabletrack/service.md, systemctl(1), journalctl(1)\n'; } >$@

format:
	clang-format -i $$(git ls-files '*.c' '*.h' '*.cu' '*.cpp')

clean:
	rm -rf $(BUILD)

.PHONY: all deps run test fuzz install uninstall format clean
.SECONDARY:

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# --- GPU test and benchmark (threshold room): need only the CUDA toolkit and
# libc, so they build on a GPU machine without the Debian dev packages.
#   make gpu-test     CUDA against the CPU reference, bit for bit
#   make gpu-bench    per-stage medians and p99, CPU and GPU
GPU_C_SRC := src/threshold/cpu.c src/threshold/threshold.c src/core/image.c src/core/err.c src/core/log.c src/core/clock.c
GPU_CFLAGS := -std=c11 -O2 -g -D_GNU_SOURCE -Wall -Wextra -Wshadow -Wmissing-prototypes -Werror
GPU_LIBS := -L$(CUDA_LIBDIR) -lcudart_static -ldl -lrt -lpthread -lm -lstdc++

$(BUILD)/gpu/bernsen.o: cuda/bernsen.cu cuda/bernsen_cuda.h
	@mkdir -p $(dir $@)
	$(NVCC) -O3 -std=c++17 $(CUDA_ARCH) -lineinfo -Xcompiler -Wall,-Wextra -Werror all-warnings -c $< -o $@

$(BUILD)/gpu/gpu_%: tests/gpu/gpu_%.c $(GPU_C_SRC) $(BUILD)/gpu/bernsen.o
	$(CC) $(GPU_CFLAGS) $< $(GPU_C_SRC) $(BUILD)/gpu/bernsen.o -o $@ $(GPU_LIBS)

gpu-test: $(BUILD)/gpu/gpu_test
	$(BUILD)/gpu/gpu_test $(GPU_FRAMES)

gpu-bench: $(BUILD)/gpu/gpu_bench
	$(BUILD)/gpu/gpu_bench

.PHONY: gpu-test gpu-bench

# --- Soak (not part of make test): the demo for SOAK_MINUTES (default 30)
# under SAN=address,undefined and SAN=thread in parallel (builds in
# build/soak/), RSS sampled every minute; fails on any sanitizer report or
# RSS growth after the warm-up. Settings: see tools/soak.sh.
soak:
	@sh tools/soak.sh

.PHONY: soak
