import COpenBLAS
import Testing

/// The shims for libraries whose users arrive later still have to compile and link.
@Suite struct SystemLibraryLinkTests {
    @Test func openBLASMultipliesMatrices() {
        let a: [Float] = [1, 2, 3, 4, 5, 6]  // 2×3
        let b: [Float] = [7, 8, 9, 10, 11, 12]  // 3×2
        var c = [Float](repeating: 0, count: 4)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 2, 3, 1, a, 3, b, 2, 0, &c, 2)
        #expect(c == [58, 64, 139, 154])
    }
}
