// fpdeep ReLU (docs/numerics.md §5), forward and backward in one streaming unit:
//   forward  (cfg_bwd = 0): y  = convert(max(x, 0))           from s_x alone
//   backward (cfg_bwd = 1): dx = convert(x > 0 ? e : 0)       s_e joined with the stashed
//                                                             forward input on s_x
// convert = fpdeep_requant by cfg_shift (source minus destination fractional bits).
// One registered output stage; full throughput; last follows s_x.
`default_nettype none

module fpdeep_relu #(
    parameter int DW = 16,
    parameter int SW = 7
) (
    input  wire logic                 clk,
    input  wire logic                 rst,
    input  wire logic                 cfg_bwd,
    input  wire logic signed [SW-1:0] cfg_shift,
    input  wire logic [DW-1:0]        s_x_data,
    input  wire logic                 s_x_last,
    input  wire logic                 s_x_valid,
    output logic                      s_x_ready,
    input  wire logic [DW-1:0]        s_e_data,
    input  wire logic                 s_e_last,   // ignored: s_x frames the tensor
    input  wire logic                 s_e_valid,
    output logic                      s_e_ready,
    output logic [DW-1:0]             m_data,
    output logic                      m_last,
    output logic                      m_valid,
    input  wire logic                 m_ready
);
    wire logic out_free = !m_valid || m_ready;
    wire logic have_in  = s_x_valid && (!cfg_bwd || s_e_valid);
    wire logic fire     = out_free && have_in;
    assign s_x_ready = out_free && (!cfg_bwd || s_e_valid);
    assign s_e_ready = out_free && cfg_bwd && s_x_valid;

    wire logic pos = !s_x_data[DW-1] && (s_x_data != '0);
    wire logic [DW-1:0] v = !pos ? '0 : (cfg_bwd ? s_e_data : s_x_data);
    logic [DW-1:0] y;
    // Wide enough for a left shift by up to 2^(SW-1) - 1 before saturation.
    localparam int IW = DW + (1 << (SW - 1));
    fpdeep_requant #(.IW(IW), .OW(DW), .SW(SW)) u_rq (
        .x(IW'($signed(v))), .shift(cfg_shift), .y(y));

    always_ff @(posedge clk) begin
        if (rst) begin
            m_valid <= 1'b0;
        end else if (out_free) begin
            m_valid <= have_in;
            if (fire) begin
                m_data <= y;
                m_last <= s_x_last;
            end
        end
    end

    // lint: s_e_last is part of the stream interface but carries no extra information here
    wire logic unused = s_e_last;
endmodule

`default_nettype wire
