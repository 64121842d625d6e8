// fpdeep Dropout (docs/numerics.md §21), one streaming unit for every direction:
//   y = requant(keep ? x * cfg_mult : 0, cfg_shift)
// Training forward and backward differ only in cfg_shift (fx + r - fy, fe + r - fe'), since
// the backward pass applies the forward pass's mask to the error; the forward-only pass
// (inference) keeps everything unscaled: cfg_mult = 1, cfg_thresh = 0, cfg_shift = fx - fy.
// The mask is the golden model's: a 32-bit Galois LFSR (x^32 + x^22 + x^2 + x + 1, shifting
// right), seeded per image with
//   s0 = cfg_seed_layer ^ 0x85EBCA77 * (seed_step + 1) ^ cfg_seed_image   (1 where that is 0),
// where the host's CSR gives the training step and the controller the two other terms
// (0x9E3779B1 (l+1) and 0xC2B2AE3D (b+1), mod 2^32); element n of the image takes the state
// 16 (n+1) steps on and is kept when its low 16 bits are at least cfg_thresh.
// The image starts with the first element after reset or after a last. One registered
// output stage; full throughput.
`default_nettype none

module fpdeep_dropout #(
    parameter int DW = 16,
    parameter int SW = 7
) (
    input  wire logic                 clk,
    input  wire logic                 rst,
    input  wire logic [16:0]          cfg_mult,
    input  wire logic signed [SW-1:0] cfg_shift,
    input  wire logic [16:0]          cfg_thresh,
    input  wire logic [31:0]          cfg_seed_layer,
    input  wire logic [31:0]          cfg_seed_image,
    input  wire logic [31:0]          seed_step,
    input  wire logic [DW-1:0]        s_x_data,
    input  wire logic                 s_x_last,
    input  wire logic                 s_x_valid,
    output logic                      s_x_ready,
    output logic [DW-1:0]             m_data,
    output logic                      m_last,
    output logic                      m_valid,
    input  wire logic                 m_ready
);
    localparam logic [31:0] TAPS = 32'h8020_0003;
    localparam logic [31:0] SEED_STEP = 32'h85EB_CA77;

    wire logic out_free = !m_valid || m_ready;
    wire logic fire     = out_free && s_x_valid;
    assign s_x_ready = out_free;

    // the image's seed, and the LFSR state 16 steps on from the last element's
    wire logic [31:0] step_term = SEED_STEP * (seed_step + 32'd1);
    wire logic [31:0] mixed = cfg_seed_layer ^ step_term ^ cfg_seed_image;
    wire logic [31:0] seed = (mixed == '0) ? 32'd1 : mixed;
    logic [31:0] state;
    logic        first;
    logic [31:0] next;
    always_comb begin
        next = first ? seed : state;
        for (int k = 0; k < 16; k++)
            next = (next >> 1) ^ (next[0] ? TAPS : '0);
    end
    wire logic keep = {1'b0, next[15:0]} >= cfg_thresh;

    localparam int PW = DW + 17;  // x times the 17-bit multiplier
    // Wide enough for a left shift by up to 2^(SW-1) - 1 before saturation.
    localparam int IW = PW + (1 << (SW - 1));
    wire logic signed [PW-1:0] v = keep ? PW'($signed(s_x_data)) * PW'($signed({1'b0, cfg_mult}))
                                        : '0;
    logic [DW-1:0] y;
    fpdeep_requant #(.IW(IW), .OW(DW), .SW(SW)) u_rq (.x(IW'(v)), .shift(cfg_shift), .y(y));

    always_ff @(posedge clk) begin
        if (rst) begin
            m_valid <= 1'b0;
            first <= 1'b1;
        end else if (out_free) begin
            m_valid <= s_x_valid;
            if (fire) begin
                m_data <= y;
                m_last <= s_x_last;
                state <= next;
                first <= s_x_last;
            end
        end
    end
endmodule

`default_nettype wire
