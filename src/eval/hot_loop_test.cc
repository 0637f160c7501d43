#include "eval/hot_loop.h"

#include <gtest/gtest.h>

#include "core/json_io.h"
#include "testing/run_command.h"
#include "testing/temp_dir.h"

namespace accelopt::eval {
namespace {

// As objdump prints it: a vector loop, its scalar remainder, and an outer loop around a scalar one.
const char* kDisassembly = R"(
0000000000001100 <kernel>:
    1100:	lea    0x4(%rdi),%rdx
    1113:	jbe    114f <kernel+0x4f>
    1115:	vbroadcastss 0xee2(%rip),%ymm2        # 2000 <_fini+0xe84>
    1130:	vmovaps %ymm2,%ymm0
    1134:	vfmadd132ps (%rdi,%rax,1),%ymm1,%ymm0
    113a:	vmovups %ymm0,(%rsi,%rax,1)
    113f:	add    $0x20,%rax
    1143:	cmp    $0x4000,%rax
    1149:	jne    1130 <kernel+0x30>
    114b:	vzeroupper
    114e:	ret
    114f:	vmovss 0xea9(%rip),%xmm2        # 2000 <_fini+0xe84>
    1160:	vmovaps %xmm2,%xmm0
    1164:	vfmadd132ss (%rdi,%rax,4),%xmm1,%xmm0
    116a:	vmovss %xmm0,(%rsi,%rax,4)
    116f:	inc    %rax
    1178:	jne    1160 <kernel+0x60>
    117a:	ret

0000000000001200 <other>:
    1200:	xor    %eax,%eax
    1210:	addss  (%rdi),%xmm0
    1214:	add    $0x4,%rdi
    1218:	jne    1210 <other+0x10>
    121c:	inc    %ecx
    1220:	jne    1200 <other>
    1224:	ret
)";

TEST(HotLoop, TheInnermostLoopWithTheWidestVectorWorkIsShown) {
  const std::string loop = HotLoopFromDisassembly(kDisassembly);
  EXPECT_EQ(loop,
            "in kernel, a loop of 6 instructions at +0x30..+0x49:\n"
            "  +0x30  vmovaps %ymm2,%ymm0\n"
            "  +0x34  vfmadd132ps (%rdi,%rax,1),%ymm1,%ymm0\n"
            "  +0x3a  vmovups %ymm0,(%rsi,%rax,1)\n"
            "  +0x3f  add    $0x20,%rax\n"
            "  +0x43  cmp    $0x4000,%rax\n"
            "  +0x49  jne    1130 <kernel+0x30>\n");
  EXPECT_NE(HotLoopFromDisassembly(kDisassembly, 2).find("  ... 4 more\n"), std::string::npos);
  EXPECT_EQ(HotLoopFromDisassembly("0000000000001000 <f>:\n    1000:\tret\n"), "");
  EXPECT_EQ(HotLoopFromDisassembly(""), "");
}

TEST(HotLoop, ScalarCodeStillShowsItsInnermostLoop) {
  const std::string only_other = std::string(kDisassembly).substr(std::string(kDisassembly).find("0000000000001200"));
  const std::string loop = HotLoopFromDisassembly(only_other);
  EXPECT_NE(loop.find("in other, a loop of 3 instructions at +0x10..+0x18:"), std::string::npos) << loop;
}

TEST(HotLoop, ABuiltLibraryIsDisassembled) {
  testing::TempDir dir;
  ASSERT_TRUE(WriteFile(dir.path() + "/k.cpp",
                        "extern \"C\" void kernel(const float* x, float* out) {\n"
                        "  for (long i = 0; i < 4096; ++i) out[i] = 2.0f * x[i] + 1.0f;\n}\n")
                  .ok());
  auto built = testing::RunShell("c++ -O2 -fPIC -shared -o " + dir.path() + "/k.so " + dir.path() + "/k.cpp");
  ASSERT_EQ(built.exit_code, 0) << built.out;
  const std::string loop = HotLoop(dir.path() + "/k.so");
  EXPECT_NE(loop.find("in kernel, a loop of "), std::string::npos) << loop;
  EXPECT_EQ(HotLoop(dir.path() + "/missing.so"), "");
}

}  // namespace
}  // namespace accelopt::eval
