// Test harness: two reliable link ends joined by two faulty channels, A's tx to B's rx and
// B's tx to A's rx, each carrying data one way and acknowledgements the other. The link
// streams from A are brought out to be watched.
`default_nettype none

module fpdeep_link_pair #(
    parameter int W      = 64,
    parameter int TAGW   = 16,
    parameter int FW     = 3,
    parameter int MAXLEN = 8,
    parameter int RD     = 64,
    parameter int RXD    = 32
) (
    input  wire logic            clk,
    input  wire logic            rst,
    input  wire logic [15:0]     cfg_latency,
    input  wire logic [15:0]     cfg_num,
    input  wire logic [15:0]     cfg_den,
    input  wire logic [31:0]     cfg_seed,
    input  wire logic [31:0]     cfg_ber,
    input  wire logic [31:0]     cfg_drop,
    input  wire logic [31:0]     cfg_timeout,
    input  wire logic [31:0]     cfg_stuck,
    input  wire logic [31:0]     cfg_refresh,
    input  wire logic [31:0]     cfg_holdoff,
    input  wire logic [15:0]     cfg_maxlen,
    input  wire logic [W-1:0]    a_s_data,
    input  wire logic [TAGW-1:0] a_s_tag,
    input  wire logic            a_s_last,
    input  wire logic            a_s_valid,
    output logic                 a_s_ready,
    output logic [W-1:0]         a_m_data,
    output logic [TAGW-1:0]      a_m_tag,
    output logic                 a_m_last,
    output logic                 a_m_valid,
    input  wire logic            a_m_ready,
    input  wire logic [W-1:0]    b_s_data,
    input  wire logic [TAGW-1:0] b_s_tag,
    input  wire logic            b_s_last,
    input  wire logic            b_s_valid,
    output logic                 b_s_ready,
    output logic [W-1:0]         b_m_data,
    output logic [TAGW-1:0]      b_m_tag,
    output logic                 b_m_last,
    output logic                 b_m_valid,
    input  wire logic            b_m_ready,
    // A's link out (framer side) and what B receives of it
    output logic [W-1:0]         ab_tx_data,
    output logic                 ab_tx_last,
    output logic                 ab_tx_valid,
    output logic                 ab_tx_ready,
    output logic [W-1:0]         ab_rx_data,
    output logic                 ab_rx_last,
    output logic                 ab_rx_valid,
    output logic [7*32-1:0]      a_counts,    // tx frames, replays, timeouts, credit stalls,
    output logic [7*32-1:0]      b_counts,    // rx frames, crc errors, discards
    output logic [2*32-1:0]      ab_faults,   // channel A to B: corrupted, dropped frames
    output logic [2*32-1:0]      ba_faults,
    output logic [1:0]           a_flags,     // {overflow, stuck}
    output logic [1:0]           b_flags
);
    logic [W-1:0] ba_tx_data, ba_rx_data;
    logic         ba_tx_last, ba_tx_valid, ba_tx_ready, ba_rx_last, ba_rx_valid, ba_rx_ready;
    logic         ab_rx_ready;

    fpdeep_link_end #(.W(W), .TAGW(TAGW), .FW(FW), .MAXLEN(MAXLEN), .RD(RD), .RXD(RXD)) u_a (
        .clk, .rst, .cfg_timeout, .cfg_stuck, .cfg_refresh, .cfg_holdoff, .cfg_maxlen,
        .s_data(a_s_data), .s_tag(a_s_tag), .s_last(a_s_last), .s_valid(a_s_valid),
        .s_ready(a_s_ready), .m_data(a_m_data), .m_tag(a_m_tag), .m_last(a_m_last),
        .m_valid(a_m_valid), .m_ready(a_m_ready),
        .tx_data(ab_tx_data), .tx_last(ab_tx_last), .tx_valid(ab_tx_valid),
        .tx_ready(ab_tx_ready), .rx_data(ba_rx_data), .rx_last(ba_rx_last),
        .rx_valid(ba_rx_valid), .rx_ready(ba_rx_ready),
        .tx_frames(a_counts[0 +: 32]), .tx_replays(a_counts[32 +: 32]),
        .tx_timeouts(a_counts[64 +: 32]), .tx_credit_stalls(a_counts[96 +: 32]),
        .rx_frames(a_counts[128 +: 32]), .rx_crc_errors(a_counts[160 +: 32]),
        .rx_discards(a_counts[192 +: 32]), .stuck(a_flags[0]), .overflow(a_flags[1]));

    fpdeep_link_end #(.W(W), .TAGW(TAGW), .FW(FW), .MAXLEN(MAXLEN), .RD(RD), .RXD(RXD)) u_b (
        .clk, .rst, .cfg_timeout, .cfg_stuck, .cfg_refresh, .cfg_holdoff, .cfg_maxlen,
        .s_data(b_s_data), .s_tag(b_s_tag), .s_last(b_s_last), .s_valid(b_s_valid),
        .s_ready(b_s_ready), .m_data(b_m_data), .m_tag(b_m_tag), .m_last(b_m_last),
        .m_valid(b_m_valid), .m_ready(b_m_ready),
        .tx_data(ba_tx_data), .tx_last(ba_tx_last), .tx_valid(ba_tx_valid),
        .tx_ready(ba_tx_ready), .rx_data(ab_rx_data), .rx_last(ab_rx_last),
        .rx_valid(ab_rx_valid), .rx_ready(ab_rx_ready),
        .tx_frames(b_counts[0 +: 32]), .tx_replays(b_counts[32 +: 32]),
        .tx_timeouts(b_counts[64 +: 32]), .tx_credit_stalls(b_counts[96 +: 32]),
        .rx_frames(b_counts[128 +: 32]), .rx_crc_errors(b_counts[160 +: 32]),
        .rx_discards(b_counts[192 +: 32]), .stuck(b_flags[0]), .overflow(b_flags[1]));

    fpdeep_link_channel #(.W(W), .DEPTH(256)) u_ab (
        .clk, .rst, .cfg_latency, .cfg_num, .cfg_den, .cfg_seed, .cfg_ber, .cfg_drop,
        .s_data(ab_tx_data), .s_last(ab_tx_last), .s_valid(ab_tx_valid), .s_ready(ab_tx_ready),
        .m_data(ab_rx_data), .m_last(ab_rx_last), .m_valid(ab_rx_valid), .m_ready(ab_rx_ready),
        .corrupted(ab_faults[0 +: 32]), .dropped(ab_faults[32 +: 32]));

    fpdeep_link_channel #(.W(W), .DEPTH(256)) u_ba (
        .clk, .rst, .cfg_latency, .cfg_num, .cfg_den, .cfg_seed(~cfg_seed), .cfg_ber,
        .cfg_drop,
        .s_data(ba_tx_data), .s_last(ba_tx_last), .s_valid(ba_tx_valid), .s_ready(ba_tx_ready),
        .m_data(ba_rx_data), .m_last(ba_rx_last), .m_valid(ba_rx_valid), .m_ready(ba_rx_ready),
        .corrupted(ba_faults[0 +: 32]), .dropped(ba_faults[32 +: 32]));
endmodule

`default_nettype wire
