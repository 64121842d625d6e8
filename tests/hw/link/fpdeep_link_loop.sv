// Test harness: two channels through link_tx -> link_model -> link_rx.
`default_nettype none

module fpdeep_link_loop #(
    parameter int DW = 16
) (
    input  wire logic          clk,
    input  wire logic          rst,
    input  wire logic [15:0]   cfg_latency,
    input  wire logic [15:0]   cfg_num,
    input  wire logic [15:0]   cfg_den,
    input  wire logic [DW-1:0] s0_data,
    input  wire logic          s0_last,
    input  wire logic          s0_valid,
    output logic               s0_ready,
    input  wire logic [DW-1:0] s1_data,
    input  wire logic          s1_last,
    input  wire logic          s1_valid,
    output logic               s1_ready,
    output logic [DW-1:0]      m0_data,
    output logic               m0_last,
    output logic               m0_valid,
    input  wire logic          m0_ready,
    output logic [DW-1:0]      m1_data,
    output logic               m1_last,
    output logic               m1_valid,
    input  wire logic          m1_ready
);
    logic [DW+1:0] tx_data, rx_data;
    logic          tx_valid, tx_ready, rx_valid, rx_ready;
    logic [DW-1:0] r_data;
    logic          r_last;
    logic [1:0]    r_valid;

    fpdeep_link_tx #(.DW(DW), .NCH(2)) u_tx (
        .clk, .rst, .s_data({s1_data, s0_data}), .s_last({s1_last, s0_last}),
        .s_valid({s1_valid, s0_valid}), .s_ready({s1_ready, s0_ready}),
        .m_data(tx_data), .m_valid(tx_valid), .m_ready(tx_ready));
    fpdeep_link_model #(.W(DW + 2), .DEPTH(64)) u_link (
        .clk, .rst, .cfg_latency, .cfg_num, .cfg_den,
        .s_data(tx_data), .s_valid(tx_valid), .s_ready(tx_ready),
        .m_data(rx_data), .m_valid(rx_valid), .m_ready(rx_ready));
    fpdeep_link_rx #(.DW(DW), .NCH(2)) u_rx (
        .s_data(rx_data), .s_valid(rx_valid), .s_ready(rx_ready),
        .m_data(r_data), .m_last(r_last), .m_valid(r_valid), .m_ready({m1_ready, m0_ready}));
    assign {m0_data, m0_last, m0_valid} = {r_data, r_last, r_valid[0]};
    assign {m1_data, m1_last, m1_valid} = {r_data, r_last, r_valid[1]};
endmodule

`default_nettype wire
