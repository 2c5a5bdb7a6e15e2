pragma circom 2.0.0;
template MulChain(N) {
    signal input a;
    signal input b;
    signal output out;
    signal s[N];
    s[0] <== a * b;
    for (var i = 1; i < N; i++) {
        s[i] <== s[i-1] * s[i-1] + a + i;
    }
    out <== s[N-1];
}
component main {public [a]} = MulChain(3);
